"""Triton's TTGIR text in one import: layout attributes, types and whole modules (the names the package
has documented at ``linear_layouts.ttgir`` and ``linear_layouts.layouts.ttgir``, which answer with this
module).

=========================  ===========================================================================
name                       home
=========================  ===========================================================================
``parse_attribute``        ``layouts.ttgir_text``: one attribute -> catalog descriptor
``format_attribute``       ``layouts.ttgir_text``: catalog descriptor -> attribute text
``parse_type``             ``triton_model.ir_types.parse_tensor_type``: a tensor / memdesc type as written
``TensorType``             ``triton_model.ir_types``: a type, its layout and LinearLayout
``parse_module``           ``triton_model.ir_text``: a whole module (its ``types``, ``layout_aliases``,
                           ``layouts``, ops)
``TTGIRModule``            ``triton_model.ir_text.Module``
=========================  ===========================================================================

>>> m = parse_module('#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], '
...                  'warpsPerCTA = [4], order = [0]}>\\nmodule {\\n  tt.func @k() {\\n    %0 = tt.make_range '
...                  '{end = 128 : i32, start = 0 : i32} : tensor<128xi32, #blocked>\\n    tt.return\\n  }\\n}')
>>> [name for name, _ in m.layout_aliases], [(t.shape, t.element_type) for t in m.types]
(['#blocked'], [((128,), 'i32')])
"""

from linear_layouts.layouts.ttgir_text import MemorySpace, format_attribute, parse_attribute
from linear_layouts.triton_model.ir_text import Module, parse_module
from linear_layouts.triton_model.ir_types import TensorType
from linear_layouts.triton_model.ir_types import parse_tensor_type as parse_type

#: the whole module's value (``ir_text.Module``): its ``types``, ``layout_aliases`` and ``layouts``
TTGIRModule = Module

__all__ = ["parse_attribute", "format_attribute", "parse_type", "parse_module", "TensorType", "TTGIRModule",
           "MemorySpace"]
