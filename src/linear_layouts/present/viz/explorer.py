"""The explorer page: one self-contained HTML file (inline CSS, JS and data; no network).

:func:`explorer_data` turns scenarios (store/load pairs with candidate shared layouts) and catalog
layouts into JSON; the page's JavaScript (``assets/explorer.js``) draws the views, runs the bank model
for every swizzle toggle, shows the Lemma 9.4 algebra, and steps through the optimal-swizzle
construction precomputed here by :mod:`linear_layouts.analysis`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import quote
from linear_layouts.present.viz.scenarios import Scenario, seed_transpose

__all__ = ["explorer_html", "explorer_data", "layout_json", "default_scenarios", "default_catalog",
           "swizzle_steps_json", "swizzle_api", "parse_api", "script_json", "MAX_SPEC_TEXT"]


def layout_json(layout: LinearLayout, name: str = "") -> dict[str, Any]:
    """``{"name", "bases", "out_dims"}`` — the JSON spec form (see :mod:`linear_layouts.spec`).

    >>> layout_json(LinearLayout.identity_1d(2, "lane", "dim0"))["bases"]
    {'lane': [[1]]}
    """
    return {"name": name, "bases": layout.bases, "out_dims": layout.out_dims}


def swizzle_steps_json(store: LinearLayout, load: LinearLayout, dtype: DTypeLike) -> tuple[dict | None, LinearLayout | None]:
    """The optimal-swizzle construction as page steps (V, I, E, F, H, C, result) and its layout.

    Returns ``(None, None)`` when :mod:`linear_layouts.analysis` has no ``optimal_swizzle`` (yet).
    """
    try:
        from linear_layouts.present.viz.algorithm import swizzle_steps
    except ImportError:
        return None, None
    return swizzle_steps(store, load, dtype)


def _scenario_json(scenario: Scenario) -> dict[str, Any]:
    shared = [layout_json(layout, name) for name, layout in scenario.shared]
    algorithm, optimal = swizzle_steps_json(scenario.store, scenario.load, scenario.bitwidth)
    if optimal is not None:
        same = [entry for entry, (_, layout) in zip(shared, scenario.shared) if layout == optimal]
        for entry in same:
            entry["name"] += " (= optimal_swizzle)"
        if not same:
            shared.append(layout_json(optimal, "optimal (linear_layouts.analysis.optimal_swizzle)"))
    for entry in shared:
        if entry["bases"].get("block"):
            raise LayoutError(f"shared: {entry['name']}: the explorer shows single-CTA layouts only")
    return {
        "name": scenario.name,
        "shape": list(scenario.shape),
        "bitwidth": scenario.bitwidth,
        "store": layout_json(scenario.store, scenario.store_name),
        "load": layout_json(scenario.load, scenario.load_name),
        "shared": shared,
        "algorithm": algorithm,
        "note": scenario.note,
    }


def default_scenarios() -> list[Scenario]:
    """The seed transpose, plus catalog conversions when the catalog is available."""
    scenarios = [seed_transpose()]
    try:
        from linear_layouts.present.viz.catalog_scenarios import catalog_scenarios
    except ImportError:
        return scenarios
    return scenarios + catalog_scenarios()


def default_catalog() -> list[tuple[str, LinearLayout]]:
    """Catalog layouts for the distributed-view picker (empty without the catalog)."""
    try:
        from linear_layouts.present.viz.catalog_scenarios import catalog_layouts
    except ImportError:
        return []
    return catalog_layouts()


def explorer_data(scenarios: Sequence[Scenario] | None = None,
                  catalog: Sequence[tuple[str, LinearLayout]] | None = None) -> dict[str, Any]:
    """The page's JSON: ``{"scenarios": [...], "catalog": [{"name", "shape", "bases", "out_dims"}...]}``.

    >>> explorer_data()["scenarios"][0]["bitwidth"]
    32
    """
    scenarios = list(scenarios) if scenarios is not None else default_scenarios()
    if not scenarios:
        raise LayoutError("scenarios: the explorer needs at least one scenario")
    entries = []
    for name, layout in (default_catalog() if catalog is None else catalog):
        entry = layout_json(layout, name)
        entry["shape"] = list(layout.out_dims.values())
        entries.append(entry)
    return {"scenarios": [_scenario_json(s) for s in scenarios], "catalog": entries}


def _asset(name: str) -> str:
    return resources.files("linear_layouts.present.viz").joinpath("assets", name).read_text(encoding="utf-8")


def explorer_html(scenarios: Sequence[Scenario] | None = None,
                  catalog: Sequence[tuple[str, LinearLayout]] | None = None,
                  title: str = "linear_layouts explorer") -> str:
    """The explorer as one HTML document (open it from disk or serve it; it fetches nothing).

    >>> "<script" in explorer_html() and "http://" not in explorer_html().replace("http://www.w3.org", "")
    True
    """
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    values = {"__TITLE__": safe_title, "__CSS__": _asset("explorer.css"), "__JS__": _asset("explorer.js"),
              "__DATA__": script_json(explorer_data(scenarios, catalog))}
    # One pass: a title or a name that spells a placeholder stays text (never replaced by the data or the JS).
    return re.sub("__(?:TITLE|CSS|JS|DATA)__", lambda match: values[match.group(0)], _asset("explorer.html"))


def script_json(value: Any) -> str:
    """``value`` as compact JSON for a ``<script type="application/json">`` element: ``</`` is written
    ``<\\/`` (no ``</script>`` ends the element) and ``<!--`` as ``\\u003c!--`` (which would put the HTML
    tokenizer in its escaped state, where the element's own ``</script>`` no longer ends it and the page's
    next ``<script>`` becomes data). ``JSON.parse`` reads both back as written.

    >>> script_json({"name": "</script><!--<script>"})
    '{"name":"<\\\\/script>\\\\u003c!--<script>"}'
    """
    text = json.dumps(value, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


MAX_API_TENSOR_BITS = 16  #: out bits of a layout the served API accepts (a 256x256 tile)
MAX_API_IN_BITS = 24  #: in bits of such a layout (up to 256 copies of each element)


def swizzle_api(payload: Any) -> dict[str, Any]:
    """The served explorer's ``POST /api/swizzle``: ``{"store", "load", "bitwidth"}`` (JSON bases) ->
    ``{"algorithm": {"steps": [...]}, "optimal": {"bases", "out_dims"}}``, or ``{"error": message}``.

    >>> swizzle_api({"store": 1})["error"]
    "request: needs 'store', 'load' (JSON bases) and 'bitwidth'"
    """
    try:
        if not isinstance(payload, dict) or not {"store", "load", "bitwidth"} <= set(payload):
            raise LayoutError("request: needs 'store', 'load' (JSON bases) and 'bitwidth'")
        layouts = []
        for role in ("store", "load"):
            spec = payload[role]
            if not isinstance(spec, dict) or "bases" not in spec or "out_dims" not in spec:
                raise LayoutError(f"{role}: needs 'bases' and 'out_dims'")
            layout = LinearLayout(spec["bases"], spec["out_dims"])
            if layout.total_out_dim_size_log2 > MAX_API_TENSOR_BITS:
                raise LayoutError(f"{role}: tensors above 2^{MAX_API_TENSOR_BITS} elements are not served")
            if layout.total_in_dim_size_log2 > MAX_API_IN_BITS:
                raise LayoutError(f"{role}: layouts above 2^{MAX_API_IN_BITS} hardware indices (in bits) are not "
                                  "served")
            layouts.append(layout)
        bitwidth = payload["bitwidth"]
        if type(bitwidth) is not int or bitwidth not in (8, 16, 32, 64):
            raise LayoutError(f"bitwidth: must be 8, 16, 32 or 64, got {quote(bitwidth)}")
        algorithm, optimal = swizzle_steps_json(layouts[0], layouts[1], bitwidth)
        if algorithm is None or optimal is None:
            raise LayoutError("the optimal-swizzle analysis is not available")
        return {"algorithm": algorithm, "optimal": layout_json(optimal, "optimal")}
    except (LayoutError, TypeError, KeyError) as error:
        return {"error": str(error)}


MAX_SPEC_TEXT = 4000  #: characters of layout text the served API parses (a long JSON spec is under 2 KB)


def parse_api(payload: Any) -> dict[str, Any]:
    """The served explorer's ``POST /api/parse``: ``{"text": a layout spec, "shape": [sizes] or null}`` ->
    ``{"name", "bases", "out_dims"}`` (``shape`` is that of a Gluon / TTGIR descriptor; bases and CuTe
    text carry their own): the text read by the parser the command line uses
    (:func:`linear_layouts.spec.parse_spec`: Gluon, TTGIR, CuTe or JSON, no eval), or ``{"error": the
    command line's one-line message}``.

    >>> parse_api({"text": "BlockedLayout([1,4],[4,8],[4,1],[1,0])", "shape": [16, 32]})["out_dims"]
    {'dim0': 16, 'dim1': 32}
    >>> "missing a required argument: 'warps_per_cta'" in parse_api({"text": "BlockedLayout([1,4],[4,8])"})["error"]
    True
    """
    from linear_layouts.core.errors import one_line
    from linear_layouts.spec import parse_spec

    try:
        if not isinstance(payload, dict) or not isinstance(payload.get("text"), str):
            raise LayoutError("request: needs 'text' (a layout spec) and 'shape' (a list of sizes, or null)")
        text, shape = payload["text"], payload.get("shape")
        if len(text) > MAX_SPEC_TEXT:
            raise LayoutError(f"text: {len(text)} characters, more than the {MAX_SPEC_TEXT} a layout spec needs")
        if shape is not None and (not isinstance(shape, list) or not shape or len(shape) > 8 or not all(
                type(s) is int and 0 < s <= 1 << MAX_API_TENSOR_BITS and not s & (s - 1) for s in shape)):
            raise LayoutError(f"shape: a list of powers of two up to 2^{MAX_API_TENSOR_BITS}, got {quote(shape)}")
        try:
            parsed = parse_spec(text)
            layout = parsed.to_linear(None if parsed.is_linear else shape)   # the shape is for descriptors
        except LayoutError as error:
            return {"error": one_line(f"LAYOUT: {error}")}
        if layout.total_out_dim_size_log2 > MAX_API_TENSOR_BITS or layout.total_in_dim_size_log2 > MAX_API_IN_BITS:
            raise LayoutError(f"LAYOUT: tensors above 2^{MAX_API_TENSOR_BITS} elements or 2^{MAX_API_IN_BITS} "
                              "hardware indices are not served")
        return layout_json(layout, " ".join(text.split())[:120])
    except LayoutError as error:
        return {"error": one_line(str(error))}
