"""Triton as it is: its IR read as text (``ir_text``: TTIR / TTGIR modules, ops, regions; ``encodings``:
the layout of each value), the model of its lowering (``lowering``: the instructions and wavefronts Triton
emits for each op that moves data through shared memory; ``allocation``, ``liveness``: its shared-memory
allocator), execution counts (``trips``), kernel files and their CPU compile (``kernel_file``,
``compile``) and interop with the installed Triton (``interop``: Gluon objects, Triton's C++
``LinearLayout``, Triton's bank-conflict estimate).
"""
