/* linear_layouts explorer: layouts as F2 matrices, drawn, costed and swizzled in the browser.
 *
 * Everything here is computed from the JSON that the Python package embeds (id="explorer-data"):
 * layouts as bases, and for each scenario the optimal-swizzle steps that Python's analysis computed.
 * Tensor coordinates are bit-vectors packed into one int, first out dim least significant (the
 * package's flat_bases convention). Shared memory: 32 banks of 4 bytes, bank = (byte address / 4) % 32.
 * No network access, no dependencies.
 */
"use strict";

(function () {
  const NUM_BANKS = 32;

  /* ---------------------------------------------------------------- F2 on ints */
  const F2 = {
    /* Reduced echelon basis of span(vectors), keyed by the highest set bit. */
    echelon(vectors) {
      const basis = [];
      for (let v of vectors) {
        for (const b of basis) if ((v ^ b) < v) v ^= b;
        if (v) {
          for (let i = 0; i < basis.length; i++) if ((basis[i] ^ v) < basis[i]) basis[i] ^= v;
          basis.push(v);
          basis.sort((a, b) => b - a);
        }
      }
      return basis;
    },
    rank(vectors) { return F2.echelon(vectors).length; },
    inSpan(v, vectors) {
      for (const b of F2.echelon(vectors)) if ((v ^ b) < v) v ^= b;
      return v === 0;
    },
    /* Basis of span(U) ∩ span(V) (Zassenhaus): eliminate on the left half of rows (u|u), (v|0);
     * the right halves of the rows whose left half vanishes span the intersection. */
    intersection(U, V) {
      const lead = (x) => 31 - Math.clz32(x);
      const pivots = new Map();
      const meet = [];
      for (let [left, right] of U.map((u) => [u, u]).concat(V.map((v) => [v, 0]))) {
        while (left && pivots.has(lead(left))) {
          const [pl, pr] = pivots.get(lead(left));
          left ^= pl;
          right ^= pr;
        }
        if (left) pivots.set(lead(left), [left, right]);
        else if (right) meet.push(right);
      }
      return F2.echelon(meet);
    },
  };

  /* ------------------------------------------------------------- Layouts */
  function log2(n) { return 31 - Math.clz32(n); }
  /* A count and its noun, plural unless the count is 1: counted(1, "warp") is "1 warp". */
  function counted(n, noun) { return `${n} ${noun}${n === 1 ? "" : "s"}`; }

  class Layout {
    /* bases: {inDim: [[c0, c1, ...], ...]}, outDims: {name: size}; coordinates packed dim0 first. */
    constructor(bases, outDims) {
      this.outNames = Object.keys(outDims);
      this.outSizes = this.outNames.map((n) => outDims[n]);
      for (const s of this.outSizes) {
        if (!(s > 0 && (s & (s - 1)) === 0)) throw new Error(`out dim size ${s} is not a power of two`);
      }
      this.shifts = [];
      let shift = 0;
      for (const s of this.outSizes) { this.shifts.push(shift); shift += log2(s); }
      this.totalBits = shift;
      if (this.totalBits > 24) throw new Error("tensors above 2^24 elements are too large to explore");
      this.inNames = Object.keys(bases);
      this.flat = {};
      for (const d of this.inNames) {
        this.flat[d] = bases[d].map((v, i) => {
          if (!Array.isArray(v) || v.length !== this.outNames.length) {
            throw new Error(`basis ${d}[${i}] must have ${this.outNames.length} coordinates`);
          }
          return v.reduce((acc, c, k) => {
            if (!Number.isInteger(c) || c < 0 || c >= this.outSizes[k]) {
              throw new Error(`basis ${d}[${i}] coordinate ${c} is outside ${this.outNames[k]} (size ${this.outSizes[k]})`);
            }
            return acc | (c << this.shifts[k]);
          }, 0);
        });
      }
    }
    size(dim) { return this.flat[dim] ? 1 << this.flat[dim].length : 1; }
    bits(dim) { return this.flat[dim] ? this.flat[dim].length : 0; }
    /* Packed image of value x of in dim `dim`. */
    applyDim(dim, x) {
      let out = 0;
      const vs = this.flat[dim] || [];
      for (let i = 0; x; i++, x >>= 1) if (x & 1) out ^= vs[i];
      return out;
    }
    apply(inputs) {
      let out = 0;
      for (const d of Object.keys(inputs)) out ^= this.applyDim(d, inputs[d]);
      return out;
    }
    coords(packed) { return this.outSizes.map((s, k) => (packed >> this.shifts[k]) & (s - 1)); }
    rowMajor(packed) {
      let index = 0;
      this.outSizes.forEach((s, k) => { index = index * s + ((packed >> this.shifts[k]) & (s - 1)); });
      return index;
    }
    get numElements() { return 1 << this.totalBits; }
    /* Names of the tensor bits: m (dim0) and n (dim1) for matrices, as in the seeds. */
    bitNames() {
      const letters = this.outNames.length === 2 ? ["m", "n"] : this.outNames.length === 1 ? ["n"] : null;
      const names = [];
      this.outSizes.forEach((s, k) => {
        for (let i = 0; i < log2(s); i++) names.push(letters ? `${letters[k]}${i}` : `${this.outNames[k]}[${i}]`);
      });
      return names;
    }
    vectorName(v) {
      if (!v) return "0";
      const names = this.bitNames();
      const parts = [];
      // dim1 (n) bits first, as the seeds write them: n1⊕m0.
      const order = names.map((_, i) => i);
      if (this.outNames.length === 2) order.sort((a, b) => (a >= this.shifts[1] ? 0 : 1) - (b >= this.shifts[1] ? 0 : 1) || a - b);
      for (const i of order) if ((v >> i) & 1) parts.push(names[i]);
      return parts.join("⊕");
    }
  }

  /* ---------------------------------------------------------- Bank model */
  /* Where every tensor element lives: offsetOf[packed element] (first offset when duplicated). */
  function offsetTable(shared) {
    const table = new Int32Array(1 << shared.totalBits).fill(-1);
    const n = shared.size("offset");
    for (let o = 0; o < n; o++) {
      const e = shared.applyDim("offset", o);
      if (table[e] < 0) table[e] = o;
    }
    return table;
  }

  /* Wavefronts of one warp-wide access of `dist` to `shared`, per HARDWARE.md's model:
   * registers that step the offset by 1, 2, 4, ... form the vector (at most 16 bytes); every other
   * register value and every warp is one instruction; lanes split into phases of at most 128 bytes;
   * a phase costs the largest number of distinct 4-byte words asked of one bank. Pairing
   * (analysis.bank_simulator.instruction_wavefronts, measured with ncu): an 8- or 16-byte LOAD of 32
   * lanes where every lane asks for lane l^1's address, or every lane for lane l^2's, has phases of
   * twice as many lanes; stores (isStore) never pair. */
  function simulateAccess(dist, shared, bitwidth, isStore = false) {
    const offsetOf = offsetTable(shared);
    const regs = (dist.flat.register || []).filter((v) => v !== 0);
    /* The widest vector 2^v (at most 128 bits) such that, after permuting registers, the first v
     * registers step the offset by 1, 2, 4, ... and no other basis touches the low v offset bits
     * (S^-1 ∘ L divisible on the left by the identity tile: analysis.banks.shared_access). */
    const regOffsets = regs.map((e) => offsetOf[e]);
    const others = (dist.flat.lane || []).concat(dist.flat.warp || []).map((e) => offsetOf[e]);
    let v = Math.min(log2(Math.max(1, 128 / bitwidth)), regs.length);
    let vecIndex = [];
    for (; v > 0; v--) {
      vecIndex = [];
      for (let k = 0; k < v; k++) {
        const i = regOffsets.lastIndexOf(1 << k);
        if (i < 0) break;
        vecIndex.push(i);
      }
      if (vecIndex.length < v) continue;
      const mask = (1 << v) - 1;
      const rest = regOffsets.filter((_, i) => !vecIndex.includes(i)).concat(others);
      if (rest.every((o) => (o & mask) === 0)) break;
    }
    if (v === 0) vecIndex = [];
    const vec = vecIndex.map((i) => regs[i]);
    const rest = regs.filter((_, i) => !vecIndex.includes(i));
    const vecElems = 1 << vec.length;
    const vecBytes = (vecElems * bitwidth) / 8;
    const wordsPerAccess = Math.max(1, vecBytes / 4);
    const lanes = dist.size("lane");
    const phases = vecBytes >= 16 ? 4 : vecBytes >= 8 ? 2 : 1;
    const warps = dist.size("warp");
    const laneImages = [];
    for (let t = 0; t < lanes; t++) laneImages.push(dist.applyDim("lane", t));
    /* Offsets are linear in the lane index, so pairing is decided by the lane images alone: lane l and
     * l^m ask for one aligned vector in every instruction iff they do in the first one. */
    const unitOf = (e) => Math.floor((offsetOf[e] * bitwidth) / 8 / Math.max(4, vecBytes));
    const paired = !isStore && vecBytes >= 8 && lanes === 32 && [1, 2].some((m) =>
      laneImages.every((img, t) => unitOf(img) === unitOf(laneImages[t ^ m])));
    const lanesPerPhase = Math.max(1, Math.floor(lanes / phases)) * (paired ? 2 : 1);
    const steps = [];
    let total = 0;
    for (let w = 0; w < warps; w++) {
      const warpImage = dist.applyDim("warp", w);
      for (let r = 0; r < 1 << rest.length; r++) {
        let regImage = 0;
        for (let i = 0; i < rest.length; i++) if ((r >> i) & 1) regImage ^= rest[i];
        const stepPhases = [];
        let stepCost = 0;
        for (let p = 0; p < Math.ceil(lanes / lanesPerPhase); p++) {
          const words = Array.from({ length: NUM_BANKS }, () => new Set());
          const lanesOn = Array.from({ length: NUM_BANKS }, () => new Set());
          for (let t = p * lanesPerPhase; t < Math.min(lanes, (p + 1) * lanesPerPhase); t++) {
            const offset = offsetOf[regImage ^ laneImages[t] ^ warpImage];
            const firstWord = Math.floor((offset * bitwidth) / 32 / wordsPerAccess) * wordsPerAccess;
            for (let k = 0; k < wordsPerAccess; k++) {
              const word = firstWord + k;
              words[word % NUM_BANKS].add(word);
              lanesOn[word % NUM_BANKS].add(t);
            }
          }
          const cost = Math.max(...words.map((s) => s.size));
          stepCost += cost;
          stepPhases.push({
            lanesPerBank: lanesOn.map((s) => s.size),
            wordsPerBank: words.map((s) => s.size),
            wavefronts: cost,
          });
        }
        total += stepCost;
        steps.push({ warp: w, register: r, phases: stepPhases, wavefronts: stepCost });
      }
    }
    return { total, steps, vecElems, vecBytes, phases: paired ? phases / 2 : phases, paired, vectorBases: vec, instructionBases: rest };
  }

  /* Lemma 9.4: c = |span(S_Vec ∪ S_Idx) ∩ span(L_Thr)|; exactly n·c wavefronts when 2^v·w ≥ 4 bytes. */
  function lemma(dist, shared, bitwidth, sim) {
    const offsetBits = shared.bits("offset");
    const rowBits = Math.min(offsetBits, log2(Math.max(1, (NUM_BANKS * 4 * 8) / bitwidth)));
    const vecBits = log2(sim.vecElems);
    const seg = [];
    for (let i = rowBits; i < offsetBits; i++) seg.push(shared.flat.offset[i]);
    const vecImages = [];
    for (let i = 0; i < vecBits; i++) vecImages.push(shared.flat.offset[i]);
    const dropped = log2(sim.phases);
    const lanes = (dist.flat.lane || []).slice(0, Math.max(0, dist.bits("lane") - dropped)).filter((v) => v);
    const meet = F2.intersection(seg.concat(vecImages), lanes);
    const c = 1 << meet.length;
    const n = sim.phases;  /* phases per instruction: vecBytes / 4 (halved when lanes pair), at least 1 */
    return {
      segment: seg, thread: lanes, intersection: meet, dim: meet.length, c,
      predicted: n * c, exact: sim.vecBytes >= 4,
    };
  }

  /* ----------------------------------------------------------- Colours */
  function hsl(h, s, l) { return `hsl(${h.toFixed(1)}, ${Math.round(s * 100)}%, ${Math.round(l * 100)}%)`; }
  /* The palette of linear_layouts.viz.colors: hue by lane stepped by the golden angle (neighbouring lanes
   * far apart), lighter even warps, darker odd ones. */
  const GOLDEN_ANGLE = 137.50776405003785;
  const WARP_LIGHTNESS = [0.8, 0.66];
  function threadColor(lane, warp) {
    if (lane < 0) return "#f2f2f2";
    return hsl((GOLDEN_ANGLE * lane) % 360, 0.7, WARP_LIGHTNESS[warp % 2]);
  }
  function bankColor(bank) {
    if (bank < 0) return "#f2f2f2";
    return bank % 2 ? hsl(22.5 * (bank >> 1), 0.65, 0.47) : hsl(22.5 * (bank >> 1), 0.75, 0.75);
  }

  /* ----------------------------------------------------------- Drawing */
  function gridShape(layout) {
    const sizes = layout.outSizes;
    const cols = sizes[sizes.length - 1];
    return [layout.numElements / cols, cols];
  }

  /* A grid of cells. cellFn(r, c) -> {fill, label (lines split by "\n"), ring (outline colour),
   * mark (replicated: a dark corner triangle), group (thick lines between cells of different groups)}. */
  function drawGrid(canvas, rows, cols, cellFn, hoverFn) {
    const margin = 28;
    const cells = [];
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) cells.push(cellFn(r, c));
    const lines = Math.max(1, ...cells.map((o) => (o.label ? o.label.split("\n").length : 1)));
    const longest = Math.max(1, ...cells.flatMap((o) => (o.label ? o.label.split("\n").map((l) => l.length) : [1])));
    /* Wide tensors get the whole page width; cells never go below what their labels need (7 px text),
     * so labels stay legible (a 128-column tile scrolls inside its panel instead of shrinking). */
    const section = canvas.closest("section");
    if (section) section.classList.toggle("wide", cols > 32);
    const room = canvas.parentElement ? canvas.parentElement.clientWidth - margin - 30 : 1000;
    const needed = Math.ceil(Math.max(7 * 0.6 * longest, 7 * 1.2 * lines) + 4);
    const cell = Math.max(14, needed, Math.min(40, Math.floor(Math.max(room, 200) / cols)));
    const ratio = window.devicePixelRatio || 1;
    canvas.width = (margin + cols * cell + 2) * ratio;
    canvas.height = (margin + rows * cell + 2) * ratio;
    canvas.style.width = `${margin + cols * cell + 2}px`;
    canvas.style.height = `${margin + rows * cell + 2}px`;
    const ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.font = `${Math.max(7, Math.min(11, cell * 0.5))}px monospace`;
    ctx.fillStyle = "#666";
    ctx.textAlign = "center";
    const every = Math.max(1, Math.ceil(22 / cell));
    for (let c = 0; c < cols; c += every) ctx.fillText(String(c), margin + c * cell + cell / 2, margin - 6);
    ctx.textAlign = "right";
    for (let r = 0; r < rows; r += Math.max(1, Math.ceil(12 / cell))) ctx.fillText(String(r), margin - 3, margin + r * cell + cell * 0.7);
    ctx.textAlign = "center";
    const font = Math.min(11, (cell - 4) / (0.6 * longest), (cell - 4) / (1.2 * lines));
    const markSize = Math.max(3, Math.min(0.3 * cell, Math.max((cell - lines * 1.2 * font) / 2 + 0.2 * font,
                                                               (cell - longest * 0.6 * font) / 2)));
    ctx.font = `${font}px monospace`;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const { fill, label, ring, mark } = cells[r * cols + c];
        const x = margin + c * cell;
        const y = margin + r * cell;
        ctx.fillStyle = fill;
        ctx.fillRect(x, y, cell - 0.5, cell - 0.5);
        if (ring) {
          ctx.strokeStyle = ring;
          ctx.lineWidth = Math.max(1.5, cell / 8);
          ctx.strokeRect(x + 1, y + 1, cell - 2.5, cell - 2.5);
        }
        if (label) {
          ctx.fillStyle = isDark(fill) ? "#fff" : "#000";
          const parts = label.split("\n");
          parts.forEach((line, k) => ctx.fillText(line, x + cell / 2,
            y + cell / 2 + font * (1.2 * (k - (parts.length - 1) / 2) + 0.36)));
        }
        if (mark) {
          ctx.fillStyle = "#202020";
          ctx.beginPath();
          ctx.moveTo(x + cell - 0.5 - markSize, y);
          ctx.lineTo(x + cell - 0.5, y);
          ctx.lineTo(x + cell - 0.5, y + markSize);
          ctx.fill();
        }
      }
    }
    /* Thick lines between neighbouring cells of different groups (warps). */
    ctx.strokeStyle = "#202020";
    ctx.lineWidth = Math.max(2, cell / 9);
    ctx.beginPath();
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const g = cells[r * cols + c].group;
        if (g === undefined) continue;
        if (c + 1 < cols && cells[r * cols + c + 1].group !== g) {
          ctx.moveTo(margin + (c + 1) * cell, margin + r * cell);
          ctx.lineTo(margin + (c + 1) * cell, margin + (r + 1) * cell);
        }
        if (r + 1 < rows && cells[(r + 1) * cols + c].group !== g) {
          ctx.moveTo(margin + c * cell, margin + (r + 1) * cell);
          ctx.lineTo(margin + (c + 1) * cell, margin + (r + 1) * cell);
        }
      }
    }
    ctx.stroke();
    canvas.onmousemove = (ev) => {
      const rect = canvas.getBoundingClientRect();
      const c = Math.floor((ev.clientX - rect.left - margin) / cell);
      const r = Math.floor((ev.clientY - rect.top - margin) / cell);
      if (r >= 0 && c >= 0 && r < rows && c < cols) canvas.title = hoverFn(r, c);
    };
  }

  /* Black or white text, whichever reads better (linear_layouts.viz.colors.text_color's luminance rule). */
  function isDark(color) {
    let rgb = null;
    const m = /hsl\(([\d.]+), (\d+)%, (\d+)%\)/.exec(color);
    if (m) {
      const h = Number(m[1]) / 360, s = Number(m[2]) / 100, l = Number(m[3]) / 100;
      const q = l < 0.5 ? l * (1 + s) : l + s - l * s, p = 2 * l - q;
      const channel = (t) => {
        t = (t + 1) % 1;
        if (t < 1 / 6) return p + (q - p) * 6 * t;
        if (t < 1 / 2) return q;
        if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
        return p;
      };
      rgb = [channel(h + 1 / 3), channel(h), channel(h - 1 / 3)].map((v) => Math.round(v * 255));
    } else if (/^#[0-9a-f]{6}$/i.test(color)) {
      rgb = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
    }
    return rgb ? 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] <= 140 : false;
  }

  /* --------------------------------------------------------------- State */
  const data = JSON.parse(document.getElementById("explorer-data").textContent);
  const $ = (id) => document.getElementById(id);
  const state = {
    scenario: null, base: null, toggles: null, access: "load", step: 0, algoStep: 0,
    distName: "store", custom: null,
  };

  function layoutOf(spec) { return new Layout(spec.bases, spec.out_dims); }

  function scenario() { return data.scenarios[state.scenario]; }

  function rowBitsOf(sc) { return Math.min(log2(layoutOf(sc.shared[0]).size("offset")), log2((NUM_BANKS * 32) / sc.bitwidth)); }

  /* The current shared layout: the chosen base with the workbench toggles XORed into its segment bits. */
  function currentShared() {
    const sc = scenario();
    const base = sc.shared[state.base];
    const bases = JSON.parse(JSON.stringify(base.bases));
    const offsets = bases.offset;
    const b = rowBitsOf(sc);
    state.toggles.forEach((row, j) => row.forEach((on, i) => {
      if (on) offsets[b + j] = offsets[b + j].map((x, k) => x ^ base.bases.offset[i][k]);
    }));
    return { bases, out_dims: base.out_dims };
  }

  function setScenario(index) {
    state.scenario = index;
    state.base = 0;
    state.step = 0;
    state.algoStep = 0;
    state.custom = null;
    const sc = scenario();
    const shared = layoutOf(sc.shared[0]);
    const b = rowBitsOf(sc);
    state.toggles = Array.from({ length: shared.bits("offset") - b }, () => new Array(b).fill(false));
    const baseSelect = $("base-select");
    baseSelect.innerHTML = "";
    sc.shared.forEach((s, i) => baseSelect.add(new Option(s.name, String(i))));
    buildToggles();
    buildCatalogSelect();
    render();
  }

  function buildToggles() {
    const sc = scenario();
    const layout = layoutOf(sc.shared[state.base]);
    const b = rowBitsOf(sc);
    const table = $("toggles");
    table.innerHTML = "";
    const head = table.insertRow();
    head.insertCell().textContent = "seg bit \\ bank bit";
    for (let i = 0; i < b; i++) {
      const th = document.createElement("th");
      th.textContent = layout.vectorName(layout.flat.offset[i]);
      head.appendChild(th);
    }
    state.toggles.forEach((row, j) => {
      const tr = table.insertRow();
      const th = document.createElement("th");
      th.textContent = `s${j}: ${layout.vectorName(layout.flat.offset[b + j])}`;
      tr.appendChild(th);
      row.forEach((on, i) => {
        const td = tr.insertCell();
        const box = document.createElement("input");
        box.type = "checkbox";
        box.className = "toggle";
        box.dataset.seg = String(j);
        box.dataset.bank = String(i);
        box.checked = on;
        box.title = `XOR ${layout.vectorName(layout.flat.offset[i])} into segment bit ${j}`;
        box.addEventListener("change", () => { state.toggles[j][i] = box.checked; render(); });
        td.appendChild(box);
      });
    });
  }

  function buildCatalogSelect() {
    const sc = scenario();
    const select = $("dist-select");
    select.innerHTML = "";
    select.add(new Option(sc.store.name, "store"));
    select.add(new Option(sc.load.name, "load"));
    (data.catalog || []).filter((c) => JSON.stringify(c.shape) === JSON.stringify(sc.shape))
      .forEach((c, i) => select.add(new Option(`catalog: ${c.name}`, `catalog:${data.catalog.indexOf(c)}`)));
    select.value = state.distName;
    if (select.value !== state.distName) { state.distName = "store"; select.value = "store"; }
  }

  function distSpec() {
    const sc = scenario();
    if (state.custom) return state.custom;
    if (state.distName === "store") return sc.store;
    if (state.distName === "load") return sc.load;
    return data.catalog[Number(state.distName.split(":")[1])];
  }

  /* -------------------------------------------------------------- Render */
  function renderDistributed() {
    const spec = distSpec();
    const layout = layoutOf(spec);
    const [rows, cols] = gridShape(layout);
    const owner = new Int32Array(layout.numElements).fill(-1);
    const copies = new Int32Array(layout.numElements);
    const R = layout.size("register"), T = layout.size("lane"), W = layout.size("warp"), B = layout.size("block");
    const regImg = [], laneImg = [], warpImg = [];
    for (let r = 0; r < R; r++) regImg.push(layout.applyDim("register", r));
    for (let t = 0; t < T; t++) laneImg.push(layout.applyDim("lane", t));
    for (let w = 0; w < W; w++) warpImg.push(layout.applyDim("warp", w));
    let hw = 0;
    for (let b = 0; b < B; b++) {
      const blockImg = layout.applyDim("block", b);
      for (let w = 0; w < W; w++) for (let t = 0; t < T; t++) for (let r = 0; r < R; r++, hw++) {
        const e = layout.rowMajor(blockImg ^ warpImg[w] ^ laneImg[t] ^ regImg[r]);
        if (owner[e] < 0) owner[e] = hw;
        copies[e]++;
      }
    }
    const decode = (h) => ({ register: h % R, lane: Math.floor(h / R) % T, warp: Math.floor(h / (R * T)) % W });
    drawGrid($("dist-canvas"), rows, cols, (r, c) => {
      const h = owner[r * cols + c];
      if (h < 0) return { fill: "#f2f2f2", label: "" };
      const o = decode(h);
      const block = Math.floor(h / (R * T * W));
      return { fill: threadColor(o.lane, o.warp), label: `T${o.lane + o.warp * T}\nr${o.register}`,
               mark: copies[r * cols + c] > 1, group: o.warp + block * W };
    }, (r, c) => {
      const e = r * cols + c;
      const h = owner[e];
      if (h < 0) return `(${r}, ${c}): not held`;
      const o = decode(h);
      return `(${r}, ${c}): T${o.lane + o.warp * T}:${o.register} (warp ${o.warp}, lane ${o.lane}, register ${o.register})` +
        (copies[e] > 1 ? `, ${copies[e]} copies` : "");
    });
    $("dist-caption").textContent = `${spec.name}: ${counted(R, "register")} × ${counted(T, "lane")} × ` +
      `${counted(W, "warp")}${B > 1 ? ` × ${B} blocks` : ""} · label: T = thread (lane + ${T}·warp) over r = register · colour: lane ` +
      "(hue), odd warps darker · thick lines: warp boundaries · corner mark: replicated (held by several threads)";
  }

  function renderShared(shared, sim, sc) {
    const layout = layoutOf(shared);
    const table = offsetTable(layout);
    const [rows, cols] = gridShape(layout);
    const step = sim.steps[Math.min(state.step, sim.steps.length - 1)];
    const accessDist = layoutOf(state.access === "store" ? sc.store : sc.load);
    const hit = new Set();
    if (step) {
      const regs = sim.instructionBases;
      let regImage = 0;
      for (let i = 0; i < regs.length; i++) if ((step.register >> i) & 1) regImage ^= regs[i];
      const warpImage = accessDist.applyDim("warp", step.warp);
      for (let t = 0; t < accessDist.size("lane"); t++) {
        for (let v = 0; v < sim.vecElems; v++) {
          let vecImage = 0;
          for (let i = 0; i < sim.vectorBases.length; i++) if ((v >> i) & 1) vecImage ^= sim.vectorBases[i];
          hit.add(layout.rowMajor(regImage ^ warpImage ^ accessDist.applyDim("lane", t) ^ vecImage));
        }
      }
    }
    const physical = $("shared-view").value === "physical";
    const perRow = Math.min(layout.numElements, (NUM_BANKS * 32) / sc.bitwidth);
    const element = new Int32Array(layout.size("offset")).fill(-1);
    for (let o = 0; o < element.length; o++) element[o] = layout.applyDim("offset", o);
    const byIndex = new Map();
    for (let o = 0; o < element.length; o++) if (!byIndex.has(layout.rowMajor(element[o]))) byIndex.set(layout.rowMajor(element[o]), o);
    const bankOf = (o) => (o < 0 ? -1 : Math.floor((o * sc.bitwidth) / 32) % NUM_BANKS);
    if (physical) {
      const prow = Math.ceil(element.length / perRow);
      drawGrid($("shared-canvas"), prow, perRow, (r, c) => {
        const o = r * perRow + c;
        const e = element[o];
        const coords = layout.coords(e);
        return { fill: bankColor(bankOf(o)), label: String(coords[coords.length - 1]), ring: hit.has(layout.rowMajor(e)) ? "#111" : null };
      }, (r, c) => {
        const o = r * perRow + c;
        return `offset ${o}, bank ${bankOf(o)}: element (${layout.coords(element[o]).join(", ")})`;
      });
    } else {
      drawGrid($("shared-canvas"), rows, cols, (r, c) => {
        const o = byIndex.has(r * cols + c) ? byIndex.get(r * cols + c) : -1;
        return { fill: bankColor(bankOf(o)), label: o < 0 ? "" : String(bankOf(o)), ring: hit.has(r * cols + c) ? "#111" : null };
      }, (r, c) => {
        const o = byIndex.has(r * cols + c) ? byIndex.get(r * cols + c) : -1;
        return `(${r}, ${c}): offset ${o}, bank ${bankOf(o)}`;
      });
    }
    void table;
  }

  function renderBanks(sim) {
    const steps = sim.steps;
    const slider = $("step");
    slider.max = String(Math.max(0, steps.length - 1));
    if (state.step >= steps.length) state.step = 0;
    slider.value = String(state.step);
    const step = steps[state.step];
    $("step-label").textContent = `step ${state.step} of ${steps.length} (warp ${step.warp}, register group ${step.register})`;
    $("step-wavefronts").textContent = String(step.wavefronts);
    const svg = $("bank-bars");
    const bar = 14, height = 90;
    const phaseWidth = NUM_BANKS * bar + 24;
    svg.setAttribute("width", String(step.phases.length * phaseWidth + 10));
    svg.setAttribute("height", String(height + 40));
    const peak = Math.max(1, ...step.phases.flatMap((p) => p.lanesPerBank));
    let html = "";
    step.phases.forEach((phase, p) => {
      const x0 = 10 + p * phaseWidth;
      html += `<text x="${x0}" y="12" font-size="11">phase ${p}: ${phase.wavefronts} wavefront${phase.wavefronts === 1 ? "" : "s"}</text>`;
      phase.lanesPerBank.forEach((lanes, bank) => {
        const h = (height * lanes) / peak;
        const words = phase.wordsPerBank[bank];
        const fill = words > 1 ? "#d62728" : lanes ? bankColor(bank) : "#f2f2f2";
        html += `<rect class="bar" data-bank="${bank}" data-lanes="${lanes}" data-words="${words}" x="${x0 + bank * bar}" y="${18 + height - h}" width="${bar - 2}" height="${h}" fill="${fill}"><title>bank ${bank}: ${lanes} lanes, ${words} distinct words</title></rect>`;
        if (bank % 4 === 0) html += `<text x="${x0 + bank * bar}" y="${height + 32}" font-size="9">${bank}</text>`;
      });
      html += `<line x1="${x0}" x2="${x0 + NUM_BANKS * bar}" y1="${18 + height}" y2="${18 + height}" stroke="#333"/>`;
    });
    svg.innerHTML = html;
  }

  function renderAlgebra(dist, shared, sc, sim) {
    const box = $("algebra");
    if (!$("show-algebra").checked) { box.hidden = true; return; }
    box.hidden = false;
    const l = lemma(dist, shared, sc.bitwidth, sim);
    const name = (v) => shared.vectorName(v);
    $("seg-basis").textContent = l.segment.map(name).join(", ") || "∅";
    $("thr-basis").textContent = l.thread.map(name).join(", ") || "∅";
    $("intersection").textContent = l.intersection.length ? l.intersection.map(name).join(", ") : "{0}";
    $("intersection-dim").textContent = String(l.dim);
    $("lemma-prediction").textContent = String(l.predicted);
    const perStep = sim.steps.map((s) => s.wavefronts);
    const max = Math.max(...perStep), min = Math.min(...perStep);
    $("lemma-simulated").textContent = min === max ? String(max) : `${min}…${max}`;
    const agree = l.exact ? perStep.every((w) => w === l.predicted) : perStep.every((w) => w >= l.c);
    $("lemma-verdict").textContent = agree ? (l.exact ? "agree (Lemma 9.4, exact)" : "agree (lower bound: accesses narrower than a bank)") : "DISAGREE";
    $("lemma-verdict").className = agree ? "ok" : "bad";
  }

  function renderAlgorithm(sc) {
    const steps = (sc.algorithm && sc.algorithm.steps) || [];
    $("algo-note").textContent = sc.algorithmStale
      ? "These steps were computed for the scenario's original pair. Serve the page with `linear-layouts explore` to recompute them here, or pass --store/--load to it."
      : "";
    if (!steps.length) {
      $("algo-step").textContent = "—";
      $("algo-title").textContent = "no precomputed optimal-swizzle steps for this scenario";
      ["algo-text", "algo-vectors", "algo-position"].forEach((id) => { $(id).textContent = ""; });
      return;
    }
    state.algoStep = Math.max(0, Math.min(state.algoStep, steps.length - 1));
    const step = steps[state.algoStep];
    const shape = layoutOf(sc.shared[0]);
    $("algo-step").textContent = step.name;
    $("algo-title").textContent = step.title;
    $("algo-text").textContent = step.text;
    $("algo-vectors").textContent = step.vectors && step.vectors.length ? step.vectors.map((v) => shape.vectorName(v)).join(", ") : "∅";
    $("algo-position").textContent = `${state.algoStep + 1} / ${steps.length}`;
    document.querySelectorAll("#algo-track span").forEach((s, i) => s.classList.toggle("current", i === state.algoStep));
  }

  function buildAlgoTrack(sc) {
    const track = $("algo-track");
    track.innerHTML = "";
    ((sc.algorithm && sc.algorithm.steps) || []).forEach((s, i) => {
      const span = document.createElement("span");
      span.textContent = s.name;
      span.addEventListener("click", () => { state.algoStep = i; renderAlgorithm(sc); });
      track.appendChild(span);
    });
  }

  function render() {
    const sc = scenario();
    const sharedSpec = currentShared();
    const shared = layoutOf(sharedSpec);
    const store = layoutOf(sc.store), load = layoutOf(sc.load);
    const simStore = simulateAccess(store, shared, sc.bitwidth, true);
    const simLoad = simulateAccess(load, shared, sc.bitwidth);
    $("wf-store").textContent = String(simStore.total);
    $("wf-load").textContent = String(simLoad.total);
    $("wf-total").textContent = String(simStore.total + simLoad.total);
    $("scenario-note").textContent = sc.note || "";
    $("shared-bases").textContent = JSON.stringify(sharedSpec.bases.offset);
    const sim = state.access === "store" ? simStore : simLoad;
    renderDistributed();
    renderBanks(sim);
    renderShared(sharedSpec, sim, sc);
    renderAlgebra(state.access === "store" ? store : load, shared, sc, sim);
    buildAlgoTrack(sc);
    renderAlgorithm(sc);
    window.explorer.last = { store: simStore.total, load: simLoad.total, shared: sharedSpec };
  }

  /* ------------------------------------------------------------- Wiring */
  function init() {
    const select = $("scenario-select");
    data.scenarios.forEach((s, i) => select.add(new Option(s.name, String(i))));
    select.addEventListener("change", () => setScenario(Number(select.value)));
    $("base-select").addEventListener("change", () => {
      state.base = Number($("base-select").value);
      state.toggles.forEach((row) => row.fill(false));
      buildToggles();
      render();
    });
    $("access-select").addEventListener("change", () => { state.access = $("access-select").value; state.step = 0; render(); });
    $("step").addEventListener("input", () => { state.step = Number($("step").value); render(); });
    $("shared-view").addEventListener("change", render);
    $("show-algebra").addEventListener("change", render);
    $("dist-select").addEventListener("change", () => { state.distName = $("dist-select").value; state.custom = null; render(); });
    $("clear-toggles").addEventListener("click", () => { state.toggles.forEach((row) => row.fill(false)); buildToggles(); render(); });
    $("algo-prev").addEventListener("click", () => { state.algoStep -= 1; renderAlgorithm(scenario()); });
    $("algo-next").addEventListener("click", () => { state.algoStep += 1; renderAlgorithm(scenario()); });
    $("use-as-store").addEventListener("click", () => useAs("store"));
    $("use-as-load").addEventListener("click", () => useAs("load"));
    $("apply-shared").addEventListener("click", useShared);
    $("apply-custom").addEventListener("click", async () => {
      const error = $("custom-error");
      try {
        const { name, bases, out_dims: outDims, layout } = await parseSpec($("custom-bases").value, scenario().shape);
        if (!layout.flat.lane && !layout.flat.register) throw new Error("a distributed layout needs register or lane bases");
        state.custom = { name: name || "typed bases", bases, out_dims: outDims };
        error.textContent = "";
        render();
      } catch (e) {
        error.textContent = e.served ? e.message : `Not a layout: ${e.message}`;
      }
    });
    setScenario(0);
  }

  /* A layout typed into the page. Served by `linear-layouts explore`, the server reads it with the command
     line's parser (Gluon, TTGIR, CuTe or JSON; `shape` is the scenario's, for descriptors) and an error is
     the command line's one-line message (`e.served`); offline, only JSON bases are read, here. */
  async function parseSpec(text, shape) {
    if (location.protocol.startsWith("http")) {
      const reply = await fetch("/api/parse", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text, shape }),
      });
      const answer = await reply.json();
      if (answer.error) throw Object.assign(new Error(answer.error), { served: true });
      return { name: answer.name, bases: answer.bases, out_dims: answer.out_dims,
               layout: new Layout(answer.bases, answer.out_dims) };
    }
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new Error(`${e.message} (offline, the page reads JSON bases only: serve it with \`linear-layouts explore\` ` +
                      "to type Gluon, TTGIR or CuTe text)");
    }
    if (!parsed.bases || !parsed.out_dims) throw new Error("need \"bases\" and \"out_dims\"");
    const bases = Array.isArray(parsed.bases) ? Object.fromEntries(parsed.bases) : parsed.bases;
    const outDims = Array.isArray(parsed.out_dims) ? Object.fromEntries(parsed.out_dims) : parsed.out_dims;
    return { bases, out_dims: outDims, layout: new Layout(bases, outDims) };
  }

  function sameShape(layout, sc) { return JSON.stringify(layout.outSizes) === JSON.stringify(sc.shape); }

  function refreshBases(sc, select) {
    const baseSelect = $("base-select");
    baseSelect.innerHTML = "";
    sc.shared.forEach((s, i) => baseSelect.add(new Option(s.name, String(i))));
    state.base = select;
    baseSelect.value = String(select);
    const b = rowBitsOf(sc);
    state.toggles = Array.from({ length: layoutOf(sc.shared[select]).bits("offset") - b }, () => new Array(b).fill(false));
    buildToggles();
  }

  /* Served by `linear-layouts explore`: ask Python for the optimal swizzle of the new pair. */
  async function recompute(sc) {
    if (!location.protocol.startsWith("http")) return;
    try {
      const reply = await fetch("/api/swizzle", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ store: { bases: sc.store.bases, out_dims: sc.store.out_dims },
                               load: { bases: sc.load.bases, out_dims: sc.load.out_dims }, bitwidth: sc.bitwidth }),
      });
      const answer = await reply.json();
      if (answer.error) throw new Error(answer.error);
      sc.algorithm = answer.algorithm;
      sc.algorithmStale = false;
      sc.shared.push({ name: "optimal for this pair (computed by the server)", bases: answer.optimal.bases, out_dims: answer.optimal.out_dims });
      refreshBases(sc, sc.shared.length - 1);
      state.algoStep = 0;
      render();
    } catch (e) {
      $("algo-note").textContent = `The server could not compute the swizzle: ${e.message}`;
    }
  }

  function useAs(role) {
    const sc = scenario();
    const spec = distSpec();
    const layout = layoutOf(spec);
    if (!sameShape(layout, sc)) {
      $("use-error").textContent = `shape ${JSON.stringify(layout.outSizes)} differs from the scenario's ${JSON.stringify(sc.shape)}`;
      return;
    }
    $("use-error").textContent = "";
    sc[role] = { name: `${role}: ${spec.name}`, bases: spec.bases, out_dims: spec.out_dims };
    sc.algorithmStale = true;
    state.distName = role;
    state.custom = null;
    buildCatalogSelect();
    render();
    recompute(sc);
  }

  async function useShared() {
    const sc = scenario();
    const error = $("shared-error");
    try {
      const { bases, out_dims, layout } = await parseSpec($("custom-shared").value, sc.shape);
      if (!layout.flat.offset || layout.inNames.some((d) => d !== "offset" && d !== "block" ) || (layout.flat.block || []).length)
        throw new Error("a shared layout has \"offset\" bases (one CTA)");
      if (!sameShape(layout, sc)) throw new Error(`its tensor ${JSON.stringify(layout.outSizes)} is not the scenario's ${JSON.stringify(sc.shape)}`);
      if (layout.bits("offset") !== layout.totalBits || F2.rank(layout.flat.offset) !== layout.totalBits)
        throw new Error("the offsets must map one to one onto the tensor (an invertible layout)");
      sc.shared.push({ name: `typed ${sc.shared.length}`, bases, out_dims });
      refreshBases(sc, sc.shared.length - 1);
      error.textContent = "";
      render();
    } catch (e) {
      error.textContent = e.served ? e.message : `Not a shared layout: ${e.message}`;
    }
  }

  /* Set the workbench from a list of [segment bit, bank bit] pairs (as clicking the boxes would). */
  function setToggles(pairs) {
    state.toggles.forEach((row) => row.fill(false));
    for (const [j, i] of pairs) state.toggles[j][i] = true;
    buildToggles();
    render();
  }

  window.explorer = { F2, Layout, simulateAccess, lemma, offsetTable, state, data, render, setScenario, setToggles };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
