"""The GPU an analysis, a plan or a kernel is for: the ``Target`` value and the known targets.

Every analysis and codegen entry point takes ``target: Target | None = None`` (None: ``DEFAULT_TARGET``,
sm_90 on an H100), the public analyses a name too (``"H200"``, ``"gfx942"``: ``resolve``); one value is passed
down, nothing below reads a module global for a fact of the GPU.

* :mod:`.target`: ``Target`` (lanes, ``SharedMemory`` with its bank / phase rule, capacity, L2, ISA features);
* :mod:`.nvidia` (A100 sm_80, H100 and H200 sm_90, B200 sm_100), :mod:`.amd` (MI300X gfx942: 64 lanes, LDS);
* :mod:`.known`: ``named_target``, ``target_for_module``, ``resolve``, ``device_name``;
* :mod:`.costs`: the measured cost tables (``devices/*.json``; the global-memory tables in ``devices/global``) and
  ``cost_table`` (nearest where a device has none).

>>> t = named_target("gfx942")
>>> t.lanes, t.shared.name, t.has("ldmatrix")
(64, 'LDS', False)
"""

from linear_layouts.target.costs import DEVICE_DIR, DEVICES, CostTable, DeviceCosts, cost_table, device_costs, \
    load_device, nearest_device
from linear_layouts.target.known import ARCHS, DEFAULT_TARGET, TARGETS, device_name, named_target, parse_arch, \
    resolve, target_for_module
from linear_layouts.target.target import CP_ASYNC, FEATURES, LDMATRIX, SHFL, STMATRIX, TMA, VECTOR_ATOMICS, WGMMA, \
    SharedMemory, Target

__all__ = ["Target", "SharedMemory", "FEATURES", "LDMATRIX", "STMATRIX", "WGMMA", "TMA", "CP_ASYNC", "SHFL",
           "VECTOR_ATOMICS", "TARGETS", "ARCHS", "DEFAULT_TARGET", "named_target", "target_for_module", "resolve", "device_name",
           "parse_arch", "DeviceCosts", "CostTable", "DEVICES", "DEVICE_DIR", "load_device", "device_costs",
           "cost_table", "nearest_device"]
