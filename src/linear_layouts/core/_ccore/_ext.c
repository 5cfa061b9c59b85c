/* linear_layouts.core._ccore._ext: the compiled hot paths of linear_layouts.core.layout and linear_layouts.core.f2.
 *
 * An implementation detail behind the Python LinearLayout (which stays the API, the documentation and
 * the reference): every function here computes exactly what the Python code computes, on layouts whose
 * flattened bases fit 64-bit words (at most 64 in bits, 64 out bits and 64 dims of each kind).
 *
 * Contract with layout.py / f2.py: a function either returns the answer, or returns None (layout
 * functions, also False for the `*_into` fillers) / NotImplemented (f2 functions) meaning "not handled
 * here": the input is unusual, too wide, or invalid.  The caller then runs the Python code, which gives
 * the answer or raises the LayoutError with its message.  So error messages live in Python only, and the
 * two backends cannot disagree on them.  No function here raises for bad input; MemoryError propagates.
 *
 * Layout objects are read and written through their __slots__ (offsets taken from the member descriptors
 * of the class registered with register()), so a LinearLayout made here is field for field what the
 * Python constructor makes.
 *
 * Re-entrancy: a call into Python (a comparison or hash of an object that is not an exact str or int, a
 * buffer export) may run arbitrary code. Around every such call this file holds strong references to the
 * tuples it reads, so nothing it reads can be freed meanwhile; a layout's fields are written only while it
 * is being made (build_into refuses an initialized layout: layouts are immutable once constructed).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

/* the interface layout.py expects (register's arguments, the declining contract): layout.py ignores a
   build of another version (a stale .so) and runs pure Python */
#define ABI_VERSION 2

#define MAXB 64 /* bits of a flattened vector, and columns of an elimination */
#define MAXD 64 /* in dims or out dims of a layout */
#define MAX_DIM_LOG2 31

#if defined(_MSC_VER)
#include <intrin.h>
static inline int hibit(uint64_t v) { unsigned long i; _BitScanReverse64(&i, v); return (int)i; }
static inline int lobit(uint64_t v) { unsigned long i; _BitScanForward64(&i, v); return (int)i; }
#else
static inline int hibit(uint64_t v) { return 63 - __builtin_clzll(v); }
static inline int lobit(uint64_t v) { return __builtin_ctzll(v); }
#endif

/* results written once and not read back: non-temporal stores where the CPU has them */
#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#define STREAM_STORE(p, v) _mm_stream_si64((long long *)(p), (long long)(v))
#define STREAM_FENCE() _mm_sfence()
#else
#define STREAM_STORE(p, v) (*(p) = (v))
#define STREAM_FENCE() ((void)0)
#endif

/* shifts by 0..64 (a field at bit 64 is empty: shifting by the word size is undefined in C) */
static inline uint64_t shr(uint64_t v, int s) { return s >= 64 ? 0 : v >> s; }
static inline uint64_t shl(uint64_t v, int s) { return s >= 64 ? 0 : v << s; }

static inline uint64_t low_mask(int k) { return k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1); }

/* ------------------------------------------------------------------------------------------------ */
/* the registered LinearLayout class and its slots */

enum { F_IN_NAMES, F_IN_BASES, F_OUT_NAMES, F_OUT_LOG2, F_OUT_SHIFTS, F_IN_BITS, F_OUT_BITS, F_RANK, F_HASH,
       F_TABLES, NFIELDS };
static const char *const field_names[NFIELDS] = {"_in_names", "_in_bases", "_out_names", "_out_log2",
                                                 "_out_shifts", "_in_bits", "_out_bits", "_rank", "_hash",
                                                 "_tables"};
static Py_ssize_t field_off[NFIELDS];
static PyTypeObject *layout_type = NULL;
static richcmpfunc saved_richcompare = NULL;
static hashfunc saved_hash = NULL;

#define FIELD(o, f) (*(PyObject **)((char *)(o) + field_off[f]))

static int is_layout(PyObject *o) { return layout_type != NULL && PyObject_TypeCheck(o, layout_type); }

/* store a new reference in a slot, dropping the old value */
static void set_field(PyObject *o, int f, PyObject *value) {
    PyObject **slot = &FIELD(o, f);
    PyObject *old = *slot;
    *slot = value;
    Py_XDECREF(old);
}

/* ------------------------------------------------------------------------------------------------ */
/* F2 helpers on 64-bit words */

/* The echelon basis of span(cols[0..n)): piv[h] is the basis vector with highest bit h, 0 where there is
   none (piv is cleared first); returns the rank. Columns past full rank are not read (they reduce to 0).
   Example: cols {0b11, 0b01, 0b10} -> piv[1] = 0b11, piv[0] = 0b01, rank 2. */
static int pivots_of(const uint64_t *cols, Py_ssize_t n, uint64_t piv[MAXB]) {
    memset(piv, 0, MAXB * sizeof piv[0]);
    int r = 0;
    for (Py_ssize_t i = 0; i < n && r < MAXB; i++) {
        uint64_t v = cols[i];
        while (v) {
            int h = hibit(v);
            if (!piv[h]) { piv[h] = v; r++; break; }
            v ^= piv[h];
        }
    }
    return r;
}

static int rank_of(const uint64_t *cols, int n) {
    uint64_t piv[MAXB];
    return pivots_of(cols, n, piv);
}

/* Triton's elimination (f2.EliminationBasis): vec[h] has highest bit h and is the XOR of the columns
   in combo[h]; columns are taken in order. */
typedef struct { uint64_t vec[MAXB], combo[MAXB]; } Elim;

static void elim_build(Elim *e, const uint64_t *cols, int n) {
    memset(e, 0, sizeof *e);
    for (int j = 0; j < n; j++) {
        uint64_t v = cols[j], combo = (uint64_t)1 << j;
        while (v) {
            int h = hibit(v);
            if (!e->vec[h]) { e->vec[h] = v; e->combo[h] = combo; break; }
            v ^= e->vec[h];
            combo ^= e->combo[h];
        }
    }
}

/* 1 and *combo if y is spanned, else 0 */
static int elim_express(const Elim *e, uint64_t y, uint64_t *combo) {
    uint64_t c = 0;
    while (y) {
        int h = hibit(y);
        if (!e->vec[h]) return 0;
        y ^= e->vec[h];
        c ^= e->combo[h];
    }
    *combo = c;
    return 1;
}

static uint64_t map_flat(uint64_t v, const uint64_t *images) {
    uint64_t out = 0;
    while (v) {
        out ^= images[lobit(v)];
        v &= v - 1;
    }
    return out;
}

/* ------------------------------------------------------------------------------------------------ */
/* reading a layout */

typedef struct {
    int n_in, n_out, in_bits, out_bits;
    int in_len[MAXD], in_off[MAXD];
    int out_k[MAXD], out_s[MAXD];
    uint64_t col[MAXB];
    PyObject *in_names, *out_names; /* borrowed tuples of exact str */
} Lay;

/* exact int in [0, 2**64) -> 1 and *out; anything else -> 0, no exception left */
static int get_u64(PyObject *o, uint64_t *out) {
    if (!PyLong_CheckExact(o)) return 0;
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    *out = (uint64_t)v;
    return 1;
}

/* exact int in [lo, hi] -> 1 and *out */
static int get_int(PyObject *o, long long lo, long long hi, long long *out) {
    if (!PyLong_CheckExact(o)) return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
    if (v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int all_exact_str(PyObject *tup) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup); i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(tup, i))) return 0;
    return 1;
}

/* a LinearLayout's fields -> Lay; 0 if not a layout or too wide for 64-bit words */
static int load(PyObject *o, Lay *L) {
    if (!is_layout(o)) return 0;
    PyObject *in_names = FIELD(o, F_IN_NAMES), *in_bases = FIELD(o, F_IN_BASES);
    PyObject *out_names = FIELD(o, F_OUT_NAMES), *out_log2 = FIELD(o, F_OUT_LOG2);
    if (!in_names || !in_bases || !out_names || !out_log2) return 0;
    if (!PyTuple_CheckExact(in_names) || !PyTuple_CheckExact(in_bases) || !PyTuple_CheckExact(out_names) ||
        !PyTuple_CheckExact(out_log2))
        return 0;
    Py_ssize_t n_in = PyTuple_GET_SIZE(in_names), n_out = PyTuple_GET_SIZE(out_names);
    if (n_in > MAXD || n_out > MAXD || PyTuple_GET_SIZE(in_bases) != n_in || PyTuple_GET_SIZE(out_log2) != n_out)
        return 0;
    if (!all_exact_str(in_names) || !all_exact_str(out_names)) return 0;
    L->n_in = (int)n_in;
    L->n_out = (int)n_out;
    L->in_names = in_names;
    L->out_names = out_names;
    int s = 0;
    for (int o2 = 0; o2 < n_out; o2++) {
        long long k;
        if (!get_int(PyTuple_GET_ITEM(out_log2, o2), 0, MAX_DIM_LOG2, &k)) return 0;
        L->out_k[o2] = (int)k;
        L->out_s[o2] = s;
        s += (int)k;
        if (s > MAXB) return 0;
    }
    L->out_bits = s;
    uint64_t limit = low_mask(s);
    int c = 0;
    for (int d = 0; d < n_in; d++) {
        PyObject *dim = PyTuple_GET_ITEM(in_bases, d);
        if (!PyTuple_CheckExact(dim)) return 0;
        Py_ssize_t len = PyTuple_GET_SIZE(dim);
        if (len > MAXB - c) return 0;
        L->in_off[d] = c;
        L->in_len[d] = (int)len;
        for (Py_ssize_t i = 0; i < len; i++) {
            uint64_t v;
            if (!get_u64(PyTuple_GET_ITEM(dim, i), &v) || (v & ~limit)) return 0;
            L->col[c++] = v;
        }
    }
    L->in_bits = c;
    return 1;
}

/* ------------------------------------------------------------------------------------------------ */
/* making a layout */

static PyObject *int_tuple(const int *xs, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromLong(xs[i]);
        if (!v) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* the ints 2**0 .. 2**63, shared by every layout made here: most flattened bases are single bits, and
   equal layouts then hold the same int objects (== compares them by identity first) */
static PyObject *pow2[64];

static PyObject *word(uint64_t v) {
    if (v && !(v & (v - 1)) && pow2[hibit(v)]) {
        PyObject *o = pow2[hibit(v)];
        Py_INCREF(o);
        return o;
    }
    return PyLong_FromUnsignedLongLong(v);
}

static PyObject *bases_tuple(const int *in_len, int n_in, const uint64_t *cols) {
    PyObject *t = PyTuple_New(n_in);
    if (!t) return NULL;
    int c = 0;
    for (int d = 0; d < n_in; d++) {
        PyObject *dim = PyTuple_New(in_len[d]);
        if (!dim) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, d, dim);
        for (int i = 0; i < in_len[d]; i++) {
            PyObject *v = word(cols[c++]);
            if (!v) { Py_DECREF(t); return NULL; }
            PyTuple_SET_ITEM(dim, i, v);
        }
    }
    return t;
}

/* set every slot of `obj` (new references are taken for the two name tuples) */
static int fill(PyObject *obj, PyObject *in_names, int n_in, const int *in_len, const uint64_t *cols,
                PyObject *out_names, int n_out, const int *out_k) {
    int in_bits = 0, out_bits = 0, shifts[MAXD];
    for (int d = 0; d < n_in; d++) in_bits += in_len[d];
    for (int o = 0; o < n_out; o++) { shifts[o] = out_bits; out_bits += out_k[o]; }
    PyObject *bases = bases_tuple(in_len, n_in, cols);
    PyObject *log2 = int_tuple(out_k, n_out);
    PyObject *sh = int_tuple(shifts, n_out);
    PyObject *ib = PyLong_FromLong(in_bits), *ob = PyLong_FromLong(out_bits);
    PyObject *rk = PyLong_FromLong(rank_of(cols, in_bits));
    if (!bases || !log2 || !sh || !ib || !ob || !rk) {
        Py_XDECREF(bases); Py_XDECREF(log2); Py_XDECREF(sh); Py_XDECREF(ib); Py_XDECREF(ob); Py_XDECREF(rk);
        return -1;
    }
    Py_INCREF(in_names);
    Py_INCREF(out_names);
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    set_field(obj, F_IN_NAMES, in_names);
    set_field(obj, F_IN_BASES, bases);
    set_field(obj, F_OUT_NAMES, out_names);
    set_field(obj, F_OUT_LOG2, log2);
    set_field(obj, F_OUT_SHIFTS, sh);
    set_field(obj, F_IN_BITS, ib);
    set_field(obj, F_OUT_BITS, ob);
    set_field(obj, F_RANK, rk);
    set_field(obj, F_HASH, Py_None);
    set_field(obj, F_TABLES, Py_None);
    return 0;
}

/* a new LinearLayout (what LinearLayout._make builds) */
static PyObject *make_layout(PyObject *in_names, int n_in, const int *in_len, const uint64_t *cols,
                             PyObject *out_names, int n_out, const int *out_k) {
    PyObject *obj = layout_type->tp_alloc(layout_type, 0);
    if (!obj) return NULL;
    if (fill(obj, in_names, n_in, in_len, cols, out_names, n_out, out_k) < 0) { Py_DECREF(obj); return NULL; }
    return obj;
}

/* ------------------------------------------------------------------------------------------------ */
/* register(cls): learn the slot offsets of LinearLayout; == and hash in C */

static PyObject *layout_richcompare(PyObject *a, PyObject *b, int op);
static Py_hash_t layout_hash(PyObject *a);

/* equal field f of a and b: 1, 0, or -1 with an exception. x and y are held (strong references) while
   their items are compared: an item's __eq__ may run any code, which must not free what is being read */
static int field_eq(PyObject *a, PyObject *b, int f) {
    PyObject *x = FIELD(a, f), *y = FIELD(b, f);
    if (!x || !y) {
        PyErr_SetString(PyExc_AttributeError, "LinearLayout is not initialized");
        return -1;
    }
    if (x == y) return 1;
    Py_INCREF(x);
    Py_INCREF(y);
    int r = 1;
    if (PyTuple_CheckExact(x) && PyTuple_CheckExact(y)) { /* item by item, identity first */
        Py_ssize_t n = PyTuple_GET_SIZE(x);
        if (PyTuple_GET_SIZE(y) != n) r = 0;
        for (Py_ssize_t i = 0; r == 1 && i < n; i++) {
            PyObject *u = PyTuple_GET_ITEM(x, i), *v = PyTuple_GET_ITEM(y, i);
            if (u != v) r = PyObject_RichCompareBool(u, v, Py_EQ);
        }
    } else {
        r = PyObject_RichCompareBool(x, y, Py_EQ);
    }
    Py_DECREF(x);
    Py_DECREF(y);
    return r;
}

/* equal in_bases (tuples of tuples of ints): 1, 0, -1 with an exception, or -2 (not tuples: compare
   generically). a and b are held while their items are compared (see field_eq) */
static int bases_eq_held(PyObject *a, PyObject *b) {
    Py_ssize_t n = PyTuple_GET_SIZE(a);
    if (PyTuple_GET_SIZE(b) != n) return 0;
    for (Py_ssize_t d = 0; d < n; d++) {
        PyObject *x = PyTuple_GET_ITEM(a, d), *y = PyTuple_GET_ITEM(b, d);
        if (x == y) continue;
        if (!PyTuple_CheckExact(x) || !PyTuple_CheckExact(y)) return -2;
        Py_ssize_t m = PyTuple_GET_SIZE(x);
        if (PyTuple_GET_SIZE(y) != m) return 0;
        for (Py_ssize_t i = 0; i < m; i++) {
            PyObject *u = PyTuple_GET_ITEM(x, i), *v = PyTuple_GET_ITEM(y, i);
            uint64_t p, q;
            if (u == v) continue;
            if (get_u64(u, &p) && get_u64(v, &q)) {
                if (p != q) return 0;
                continue;
            }
            int r = PyObject_RichCompareBool(u, v, Py_EQ);
            if (r != 1) return r;
        }
    }
    return 1;
}

static int bases_eq(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    if (!a || !b || !PyTuple_CheckExact(a) || !PyTuple_CheckExact(b)) return -2;
    Py_INCREF(a);
    Py_INCREF(b);
    int r = bases_eq_held(a, b);
    Py_DECREF(a);
    Py_DECREF(b);
    return r;
}

/* LinearLayout.__eq__: same out sizes, bases, in names, out names */
static PyObject *layout_richcompare(PyObject *a, PyObject *b, int op) {
    if ((op != Py_EQ && op != Py_NE) || !is_layout(a) || !is_layout(b)) Py_RETURN_NOTIMPLEMENTED;
    int eq = 1;
    if (a != b) {
        eq = field_eq(a, b, F_OUT_LOG2);
        if (eq == 1) {
            eq = bases_eq(FIELD(a, F_IN_BASES), FIELD(b, F_IN_BASES));
            if (eq == -2) eq = field_eq(a, b, F_IN_BASES);
        }
        if (eq == 1) eq = field_eq(a, b, F_IN_NAMES);
        if (eq == 1) eq = field_eq(a, b, F_OUT_NAMES);
        if (eq < 0) return NULL;
    }
    if (op == Py_NE) eq = !eq;
    return PyBool_FromLong(eq);
}

/* the predicates, as methods of LinearLayout (the Python ones stay the reference) */
static long rank_field(PyObject *self) {
    PyObject *r = FIELD(self, F_RANK);
    if (r && PyLong_CheckExact(r)) return PyLong_AsLong(r);
    PyObject *v = PyObject_GetAttrString(self, "rank"); /* the Python property computes and caches it */
    if (!v) return -1;
    long k = PyLong_AsLong(v);
    Py_DECREF(v);
    return k;
}

static long bits_field(PyObject *self, int f) {
    PyObject *r = FIELD(self, f);
    if (!r) { PyErr_SetString(PyExc_AttributeError, "LinearLayout is not initialized"); return -1; }
    return PyLong_AsLong(r);
}

static PyObject *m_is_surjective(PyObject *self, PyObject *unused) {
    long r = rank_field(self), o = r < 0 ? -1 : bits_field(self, F_OUT_BITS);
    if (r < 0 || o < 0) return PyErr_Occurred() ? NULL : PyBool_FromLong(0);
    return PyBool_FromLong(r == o);
}

static PyObject *m_is_injective(PyObject *self, PyObject *unused) {
    long r = rank_field(self), i = r < 0 ? -1 : bits_field(self, F_IN_BITS);
    if (r < 0 || i < 0) return PyErr_Occurred() ? NULL : PyBool_FromLong(0);
    return PyBool_FromLong(r == i);
}

static PyObject *m_is_invertible(PyObject *self, PyObject *unused) {
    long i = bits_field(self, F_IN_BITS), o = i < 0 ? -1 : bits_field(self, F_OUT_BITS);
    if (i < 0 || o < 0) return PyErr_Occurred() ? NULL : PyBool_FromLong(0);
    if (i != o) Py_RETURN_FALSE;
    long r = rank_field(self);
    if (r < 0) return PyErr_Occurred() ? NULL : PyBool_FromLong(0);
    return PyBool_FromLong(r == o);
}

static PyMethodDef layout_methods[] = {
    {"is_surjective", m_is_surjective, METH_NOARGS, "Every output is reached: rank == total out bits."},
    {"is_injective", m_is_injective, METH_NOARGS, "No two inputs share an output: rank == total in bits."},
    {"is_invertible", m_is_invertible, METH_NOARGS, "Surjective and square (total in size == total out size)."},
};
#define N_LAYOUT_METHODS 3
static PyObject *saved_methods[N_LAYOUT_METHODS];

/* register(cls, members): members maps each slot name to cls's member descriptor (layout.py keeps them:
   the class shows its caches as read-only properties) */
static PyObject *ll_register(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "register takes 2 arguments"); return NULL; }
    PyObject *cls = args[0], *members = args[1];
    if (!PyType_Check(cls)) { PyErr_SetString(PyExc_TypeError, "register: a class is required"); return NULL; }
    if (!PyDict_Check(members)) { PyErr_SetString(PyExc_TypeError, "register: a dict of slots is required"); return NULL; }
    Py_ssize_t off[NFIELDS];
    for (int f = 0; f < NFIELDS; f++) {
        PyObject *d = PyDict_GetItemString(members, field_names[f]); /* borrowed; no Python code runs below */
        int ok = d && Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyDescrObject *)d)->d_type == (PyTypeObject *)cls &&
                 ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX;
        if (ok) off[f] = ((PyMemberDescrObject *)d)->d_member->offset;
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "register: %s is not a slot", field_names[f]);
            return NULL;
        }
    }
    memcpy(field_off, off, sizeof off);
    PyTypeObject *t = (PyTypeObject *)cls;
    if (layout_type == t) Py_RETURN_NONE;
    if (layout_type) {
        PyErr_SetString(PyExc_RuntimeError, "register: another class is registered");
        return NULL;
    }
    PyObject *descrs[N_LAYOUT_METHODS];
    for (int i = 0; i < N_LAYOUT_METHODS; i++) {
        descrs[i] = PyDescr_NewMethod(t, &layout_methods[i]);
        saved_methods[i] = PyObject_GetAttrString(cls, layout_methods[i].ml_name);
        if (!descrs[i] || !saved_methods[i]) {
            for (int j = 0; j <= i; j++) { Py_XDECREF(descrs[j]); Py_CLEAR(saved_methods[j]); }
            return NULL;
        }
    }
    for (int i = 0; i < N_LAYOUT_METHODS; i++) {
        int rc = PyObject_SetAttrString(cls, layout_methods[i].ml_name, descrs[i]);
        Py_DECREF(descrs[i]);
        if (rc < 0) return NULL;
    }
    Py_INCREF(t);
    layout_type = t;
    saved_richcompare = t->tp_richcompare;
    saved_hash = t->tp_hash;
    t->tp_richcompare = layout_richcompare;
    t->tp_hash = layout_hash;
    Py_RETURN_NONE;
}

/* unregister(): give the class back its Python == and hash */
static PyObject *ll_unregister(PyObject *mod, PyObject *unused) {
    if (layout_type) {
        layout_type->tp_richcompare = saved_richcompare;
        layout_type->tp_hash = saved_hash;
        for (int i = 0; i < N_LAYOUT_METHODS; i++) {
            if (saved_methods[i] &&
                PyObject_SetAttrString((PyObject *)layout_type, layout_methods[i].ml_name, saved_methods[i]) < 0)
                return NULL;
            Py_CLEAR(saved_methods[i]);
        }
        Py_CLEAR(layout_type);
    }
    Py_RETURN_NONE;
}


/* LinearLayout.__hash__: hash((in_names, in_bases, out_names, out_log2)), cached in _hash (a cached value
   that is not a valid hash is recomputed) */
static Py_hash_t layout_hash(PyObject *a) {
    PyObject *h = FIELD(a, F_HASH);
    if (h && PyLong_CheckExact(h)) {
        Py_hash_t v = PyLong_AsSsize_t(h);
        if (v != -1 && v != PY_SSIZE_T_MIN) return v;
        PyErr_Clear();
    }
    PyObject *key = PyTuple_Pack(4, FIELD(a, F_IN_NAMES) ? FIELD(a, F_IN_NAMES) : Py_None,
                                 FIELD(a, F_IN_BASES) ? FIELD(a, F_IN_BASES) : Py_None,
                                 FIELD(a, F_OUT_NAMES) ? FIELD(a, F_OUT_NAMES) : Py_None,
                                 FIELD(a, F_OUT_LOG2) ? FIELD(a, F_OUT_LOG2) : Py_None);
    if (!key) return -1;
    Py_hash_t v = PyObject_Hash(key);
    Py_DECREF(key);
    if (v == -1) return -1;
    PyObject *hv = PyLong_FromSsize_t(v);
    if (!hv) return -1;
    set_field(a, F_HASH, hv);
    return v;
}

/* ------------------------------------------------------------------------------------------------ */
/* construction */

static int name_eq(PyObject *a, PyObject *b) { return a == b || PyUnicode_Compare(a, b) == 0; }

static int find_name(PyObject *const *names, int n, PyObject *name) {
    for (int i = 0; i < n; i++) if (names[i] == name) return i;
    for (int i = 0; i < n; i++) if (PyUnicode_Compare(names[i], name) == 0) return i;
    return -1;
}

static int find_in_tuple(PyObject *tup, PyObject *name) {
    return find_name(&PyTuple_GET_ITEM(tup, 0), (int)PyTuple_GET_SIZE(tup), name);
}

/* a dim name the Python constructor keeps as is: a non-empty exact str of valid Unicode (no lone surrogate) */
static int nonempty_str(PyObject *o) {
    if (!PyUnicode_CheckExact(o) || PyUnicode_GET_LENGTH(o) == 0) return 0;
    if (PyUnicode_IS_ASCII(o)) return 1;
    if (PyUnicode_AsUTF8AndSize(o, NULL) == NULL) { PyErr_Clear(); return 0; }
    return 1;
}

static int unique_names(PyObject *const *names, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (name_eq(names[i], names[j])) return 0;
    return 1;
}

/* a list or tuple of (name, value) pairs, or an exact dict -> names[] and values[] (borrowed) */
static int read_pairs(PyObject *arg, PyObject **names, PyObject **values, int *n) {
    if (PyDict_CheckExact(arg)) {
        if (PyDict_GET_SIZE(arg) > MAXD) return 0;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        int i = 0;
        while (PyDict_Next(arg, &pos, &k, &v)) { names[i] = k; values[i] = v; i++; }
        *n = i;
        return 1;
    }
    if (!PyList_CheckExact(arg) && !PyTuple_CheckExact(arg)) return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(arg);
    if (len > MAXD) return 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(arg, i);
        if ((!PyTuple_CheckExact(item) && !PyList_CheckExact(item)) || PySequence_Fast_GET_SIZE(item) != 2) return 0;
        names[i] = PySequence_Fast_GET_ITEM(item, 0);
        values[i] = PySequence_Fast_GET_ITEM(item, 1);
    }
    *n = (int)len;
    return 1;
}

static PyObject *tuple_of(PyObject *const *items, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) { Py_INCREF(items[i]); PyTuple_SET_ITEM(t, i, items[i]); }
    return t;
}

/* build_into(self, bases, out_dims, require_surjective) -> True (self filled) or False (run Python).
   Handles the constructor's usual forms: bases a dict or a list of (name, vectors) pairs, vectors and
   coordinates lists/tuples of ints; out_dims a list of names or a dict / list of (name, size) pairs. */
static PyObject *ll_build_into(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) { PyErr_SetString(PyExc_TypeError, "build_into takes 4 arguments"); return NULL; }
    PyObject *self = args[0], *bases = args[1], *out_dims = args[2], *req = args[3];
    if (!is_layout(self) || (req != Py_True && req != Py_False)) Py_RETURN_FALSE;
    if (FIELD(self, F_IN_NAMES) != NULL) Py_RETURN_FALSE; /* constructed already: Python refuses re-running __init__ */
    int surjective = req == Py_True;
    PyObject *onames[MAXD], *osizes[MAXD], *inames[MAXD], *ivecs[MAXD];
    int n_out = 0, n_in = 0, names_mode;
    int out_k[MAXD], out_s[MAXD];
    if (!PyDict_CheckExact(out_dims) && !PyList_CheckExact(out_dims) && !PyTuple_CheckExact(out_dims))
        Py_RETURN_FALSE;
    names_mode = !PyDict_CheckExact(out_dims);
    if (names_mode) {
        Py_ssize_t len = PySequence_Fast_GET_SIZE(out_dims);
        if (len > MAXD) Py_RETURN_FALSE;
        for (Py_ssize_t i = 0; i < len; i++)
            if (!PyUnicode_Check(PySequence_Fast_GET_ITEM(out_dims, i))) { names_mode = 0; break; }
        if (names_mode) {
            for (Py_ssize_t i = 0; i < len; i++) onames[i] = PySequence_Fast_GET_ITEM(out_dims, i);
            n_out = (int)len;
        }
    }
    if (!names_mode) {
        if (!read_pairs(out_dims, onames, osizes, &n_out)) Py_RETURN_FALSE;
        for (int o = 0; o < n_out; o++) {
            long long size;
            if (!get_int(osizes[o], 1, (long long)1 << MAX_DIM_LOG2, &size) || (size & (size - 1)))
                Py_RETURN_FALSE;
            out_k[o] = hibit((uint64_t)size);
        }
    }
    for (int o = 0; o < n_out; o++) if (!nonempty_str(onames[o])) Py_RETURN_FALSE;
    if (!unique_names(onames, n_out)) Py_RETURN_FALSE;
    if (!read_pairs(bases, inames, ivecs, &n_in)) Py_RETURN_FALSE;
    for (int d = 0; d < n_in; d++) if (!nonempty_str(inames[d])) Py_RETURN_FALSE;
    if (!unique_names(inames, n_in)) Py_RETURN_FALSE;

    /* coordinates, checked; packed once the out sizes are known */
    static uint64_t coords[MAXB][MAXD];
    int in_len[MAXD], c = 0;
    uint64_t ors[MAXD] = {0};
    for (int d = 0; d < n_in; d++) {
        PyObject *vecs = ivecs[d];
        if (!PyList_CheckExact(vecs) && !PyTuple_CheckExact(vecs)) Py_RETURN_FALSE;
        Py_ssize_t len = PySequence_Fast_GET_SIZE(vecs);
        if (len > MAX_DIM_LOG2 || len > MAXB - c) Py_RETURN_FALSE;
        in_len[d] = (int)len;
        for (Py_ssize_t i = 0; i < len; i++, c++) {
            PyObject *vec = PySequence_Fast_GET_ITEM(vecs, i);
            if ((!PyList_CheckExact(vec) && !PyTuple_CheckExact(vec)) || PySequence_Fast_GET_SIZE(vec) != n_out)
                Py_RETURN_FALSE;
            for (int o = 0; o < n_out; o++) {
                long long x;
                long long hi = names_mode ? ((long long)1 << MAX_DIM_LOG2) - 1 : ((long long)1 << out_k[o]) - 1;
                if (!get_int(PySequence_Fast_GET_ITEM(vec, o), 0, hi, &x)) Py_RETURN_FALSE;
                coords[c][o] = (uint64_t)x;
                ors[o] |= (uint64_t)x;
            }
        }
    }
    if (names_mode) {
        surjective = 1;
        for (int o = 0; o < n_out; o++) out_k[o] = ors[o] ? hibit(ors[o]) + 1 : 0;
    }
    int s = 0;
    for (int o = 0; o < n_out; o++) { out_s[o] = s; s += out_k[o]; }
    if (s > MAXB) Py_RETURN_FALSE;
    uint64_t cols[MAXB];
    for (int j = 0; j < c; j++) {
        uint64_t v = 0;
        for (int o = 0; o < n_out; o++) v |= shl(coords[j][o], out_s[o]);
        cols[j] = v;
    }
    if (surjective && rank_of(cols, c) != s) Py_RETURN_FALSE;
    PyObject *in_t = tuple_of(inames, n_in), *out_t = tuple_of(onames, n_out);
    if (!in_t || !out_t) { Py_XDECREF(in_t); Py_XDECREF(out_t); return NULL; }
    int rc = fill(self, in_t, n_in, in_len, cols, out_t, n_out, out_k);
    Py_DECREF(in_t);
    Py_DECREF(out_t);
    if (rc < 0) return NULL;
    Py_RETURN_TRUE;
}

/* make(in_names, in_bases, out_names, out_log2) -> LinearLayout or None: LinearLayout._make, with the
   rank computed. Names are kept as given (any objects); bases sequences of ints. */
static PyObject *ll_make(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) { PyErr_SetString(PyExc_TypeError, "make takes 4 arguments"); return NULL; }
    if (!layout_type) Py_RETURN_NONE;
    PyObject *in_names = args[0], *in_bases = args[1], *out_names = args[2], *out_log2 = args[3];
    if (!PyTuple_CheckExact(in_names) && !PyList_CheckExact(in_names)) Py_RETURN_NONE;
    if (!PyTuple_CheckExact(out_names) && !PyList_CheckExact(out_names)) Py_RETURN_NONE;
    if (!PyTuple_CheckExact(in_bases) && !PyList_CheckExact(in_bases)) Py_RETURN_NONE;
    if (!PyTuple_CheckExact(out_log2) && !PyList_CheckExact(out_log2)) Py_RETURN_NONE;
    Py_ssize_t n_in = PySequence_Fast_GET_SIZE(in_names), n_out = PySequence_Fast_GET_SIZE(out_names);
    if (n_in > MAXD || n_out > MAXD || PySequence_Fast_GET_SIZE(in_bases) != n_in ||
        PySequence_Fast_GET_SIZE(out_log2) != n_out)
        Py_RETURN_NONE;
    int out_k[MAXD], in_len[MAXD], s = 0, c = 0;
    for (Py_ssize_t o = 0; o < n_out; o++) {
        long long k;
        if (!get_int(PySequence_Fast_GET_ITEM(out_log2, o), 0, MAX_DIM_LOG2, &k)) Py_RETURN_NONE;
        out_k[o] = (int)k;
        s += (int)k;
    }
    if (s > MAXB) Py_RETURN_NONE;
    uint64_t cols[MAXB], limit = low_mask(s);
    for (Py_ssize_t d = 0; d < n_in; d++) {
        PyObject *dim = PySequence_Fast_GET_ITEM(in_bases, d);
        if (!PyTuple_CheckExact(dim) && !PyList_CheckExact(dim)) Py_RETURN_NONE;
        Py_ssize_t len = PySequence_Fast_GET_SIZE(dim);
        if (len > MAXB - c) Py_RETURN_NONE;
        in_len[d] = (int)len;
        for (Py_ssize_t i = 0; i < len; i++) {
            uint64_t v;
            if (!get_u64(PySequence_Fast_GET_ITEM(dim, i), &v) || (v & ~limit)) Py_RETURN_NONE;
            cols[c++] = v;
        }
    }
    PyObject *in_t = PyTuple_CheckExact(in_names) ? (Py_INCREF(in_names), in_names) : PyList_AsTuple(in_names);
    PyObject *out_t = PyTuple_CheckExact(out_names) ? (Py_INCREF(out_names), out_names) : PyList_AsTuple(out_names);
    PyObject *res = NULL;
    if (in_t && out_t) res = make_layout(in_t, (int)n_in, in_len, cols, out_t, (int)n_out, out_k);
    Py_XDECREF(in_t);
    Py_XDECREF(out_t);
    return res;
}

/* ------------------------------------------------------------------------------------------------ */
/* evaluation */

/* apply(layout, ins) -> dict out name -> coordinate, or None */
static PyObject *ll_apply(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "apply takes 2 arguments"); return NULL; }
    Lay L;
    PyObject *ins = args[1];
    if (!PyDict_CheckExact(ins) || !load(args[0], &L)) Py_RETURN_NONE;
    PyObject *const *names = &PyTuple_GET_ITEM(L.in_names, 0);
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    uint64_t flat = 0;
    while (PyDict_Next(ins, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k)) Py_RETURN_NONE;
        int d = find_name(names, L.n_in, k);
        long long x;
        if (d < 0 || !get_int(v, 0, ((long long)1 << L.in_len[d]) - 1, &x)) Py_RETURN_NONE;
        flat ^= map_flat((uint64_t)x, L.col + L.in_off[d]);
    }
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (int o = 0; o < L.n_out; o++) {
        PyObject *c = PyLong_FromUnsignedLongLong(shr(flat, L.out_s[o]) & low_mask(L.out_k[o]));
        if (!c || PyDict_SetItem(out, PyTuple_GET_ITEM(L.out_names, o), c) < 0) {
            Py_XDECREF(c);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(c);
    }
    return out;
}

static int get_i64_buffer(PyObject *o, Py_buffer *view, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, view, flags) < 0) { PyErr_Clear(); return 0; }
    if (view->itemsize != 8 || !view->format || (strcmp(view->format, "l") && strcmp(view->format, "q") &&
                                                  strcmp(view->format, "<q") && strcmp(view->format, "=q") &&
                                                  strcmp(view->format, "<l") && strcmp(view->format, "=l"))) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

/* apply_all_into(layout, out) -> True: out[x] = L(x) for every flattened input (out: int64, 2**in_bits) */
static PyObject *ll_apply_all_into(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "apply_all_into takes 2 arguments"); return NULL; }
    Lay L;
    Py_buffer view;
    if (!load(args[0], &L) || L.in_bits > 40 || L.out_bits > 63) Py_RETURN_FALSE;
    if (!get_i64_buffer(args[1], &view, 1)) Py_RETURN_FALSE;
    if (view.len != (Py_ssize_t)8 << L.in_bits) { PyBuffer_Release(&view); Py_RETURN_FALSE; }
    int64_t *out = (int64_t *)view.buf;
    out[0] = 0;
    for (int i = 0; i < L.in_bits; i++) {
        int64_t b = (int64_t)L.col[i];
        Py_ssize_t half = (Py_ssize_t)1 << i;
        int64_t *hi = out + half;
        for (Py_ssize_t x = 0; x < half; x++) hi[x] = out[x] ^ b;
    }
    PyBuffer_Release(&view);
    Py_RETURN_TRUE;
}

/* apply_arrays_into(layout, dims, arrays, outs) -> True, or False when a value is out of range or the
   buffers are not as expected. dims[i]: the in-dim index of arrays[i]; arrays: int64, C-contiguous, all of
   n elements; outs: one writable int64 buffer of n elements per out dim. */
static PyObject *ll_apply_arrays_into(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) { PyErr_SetString(PyExc_TypeError, "apply_arrays_into takes 4 arguments"); return NULL; }
    Lay L;
    PyObject *dims = args[1], *arrays = args[2], *outs = args[3];
    if (!load(args[0], &L) || L.out_bits > 63 || !PyTuple_CheckExact(dims) || !PyTuple_CheckExact(arrays) ||
        !PyTuple_CheckExact(outs) || PyTuple_GET_SIZE(dims) != PyTuple_GET_SIZE(arrays) ||
        PyTuple_GET_SIZE(outs) != L.n_out || PyTuple_GET_SIZE(dims) > MAXD)
        Py_RETURN_FALSE;
    int na = (int)PyTuple_GET_SIZE(dims), no = L.n_out, ok = 1, nviews = 0;
    Py_buffer views[2 * MAXD];
    int dim_of[MAXD];
    Py_ssize_t n = -1;
    uint64_t *tables = NULL;
    for (int i = 0; i < na && ok; i++) {
        long long d;
        ok = get_int(PyTuple_GET_ITEM(dims, i), 0, L.n_in - 1, &d) &&
             get_i64_buffer(PyTuple_GET_ITEM(arrays, i), &views[nviews], 0);
        if (!ok) break;
        dim_of[i] = (int)d;
        nviews++;
        if (n < 0) n = views[i].len / 8;
        ok = views[i].len / 8 == n;
    }
    for (int o = 0; o < no && ok; o++) {
        ok = get_i64_buffer(PyTuple_GET_ITEM(outs, o), &views[nviews], 1);
        if (!ok) break;
        nviews++;
        if (n < 0) n = views[na + o].len / 8;
        ok = views[na + o].len / 8 == n;
    }
    if (ok && n > 0) {
        /* per array, per byte of its value, the 256 XORs of those 8 bases */
        int chunks[MAXD], first[MAXD], total = 0;
        for (int i = 0; i < na; i++) {
            chunks[i] = (L.in_len[dim_of[i]] + 7) / 8;
            first[i] = total;
            total += chunks[i];
        }
        tables = PyMem_Malloc(sizeof(uint64_t) * 256 * (size_t)(total ? total : 1));
        if (!tables) { for (int i = 0; i < nviews; i++) PyBuffer_Release(&views[i]); return PyErr_NoMemory(); }
        for (int i = 0; i < na; i++) {
            const uint64_t *b = L.col + L.in_off[dim_of[i]];
            int len = L.in_len[dim_of[i]];
            for (int ch = 0; ch < chunks[i]; ch++) {
                uint64_t *t = tables + 256 * (size_t)(first[i] + ch);
                int lo = ch * 8, m = len - lo < 8 ? len - lo : 8;
                t[0] = 0;
                for (int j = 0; j < m; j++)
                    for (int x = 0; x < (1 << j); x++) t[(1 << j) + x] = t[x] ^ b[lo + j];
                for (int x = 1 << m; x < 256; x++) t[x] = 0; /* unreachable after the range check */
            }
        }
        uint64_t masks[MAXD];
        int shifts[MAXD];
        const int64_t *src[MAXD];
        int64_t *dst[MAXD];
        for (int o = 0; o < no; o++) {
            masks[o] = low_mask(L.out_k[o]);
            shifts[o] = L.out_s[o];
            dst[o] = (int64_t *)views[na + o].buf;
        }
        for (int i = 0; i < na; i++) src[i] = (const int64_t *)views[i].buf;
        /* blocks of BLOCK inputs: XOR each array's table entries into flat[], then split flat[] per out dim */
        enum { BLOCK = 512 };
        uint64_t flat[BLOCK];
        for (Py_ssize_t base = 0; base < n && ok; base += BLOCK) {
            int m = n - base < BLOCK ? (int)(n - base) : BLOCK;
            memset(flat, 0, sizeof(uint64_t) * (size_t)m);
            for (int i = 0; i < na; i++) {
                const int64_t *a = src[i] + base;
                const uint64_t *t = tables + 256 * (size_t)first[i];
                int len = L.in_len[dim_of[i]];
                uint64_t bad = 0;
                switch (chunks[i]) {
                case 0:
                    for (int q = 0; q < m; q++) bad |= (uint64_t)a[q];
                    break;
                case 1:
                    for (int q = 0; q < m; q++) { uint64_t x = (uint64_t)a[q]; bad |= x >> len; flat[q] ^= t[x & 255]; }
                    break;
                case 2:
                    for (int q = 0; q < m; q++) {
                        uint64_t x = (uint64_t)a[q];
                        bad |= x >> len;
                        flat[q] ^= t[x & 255] ^ t[256 + ((x >> 8) & 255)];
                    }
                    break;
                case 3:
                    for (int q = 0; q < m; q++) {
                        uint64_t x = (uint64_t)a[q];
                        bad |= x >> len;
                        flat[q] ^= t[x & 255] ^ t[256 + ((x >> 8) & 255)] ^ t[512 + ((x >> 16) & 255)];
                    }
                    break;
                case 4:
                    for (int q = 0; q < m; q++) {
                        uint64_t x = (uint64_t)a[q];
                        bad |= x >> len;
                        flat[q] ^= t[x & 255] ^ t[256 + ((x >> 8) & 255)] ^ t[512 + ((x >> 16) & 255)] ^
                                   t[768 + ((x >> 24) & 255)];
                    }
                    break;
                default: /* wider than 32 bits (a dim made without the constructor's checks): every byte */
                    for (int q = 0; q < m; q++) {
                        uint64_t x = (uint64_t)a[q], acc = 0;
                        bad |= shr(x, len);
                        for (int ch = 0; ch < chunks[i]; ch++) acc ^= t[256 * ch + ((x >> (8 * ch)) & 255)];
                        flat[q] ^= acc;
                    }
                }
                if (bad) { ok = 0; break; }
            }
            for (int o = 0; o < no && ok; o++) {
                int64_t *d = dst[o] + base;
                int sh = shifts[o];
                uint64_t mk = masks[o];
                for (int q = 0; q < m; q++) STREAM_STORE(&d[q], (int64_t)((flat[q] >> sh) & mk));
            }
        }
        STREAM_FENCE();
        PyMem_Free(tables);
    }
    for (int i = 0; i < nviews; i++) PyBuffer_Release(&views[i]);
    return PyBool_FromLong(ok);
}

/* to_matrix_bytes(layout) -> bytearray (row r = out bit r, column c = in bit c, row-major) or None */
static PyObject *ll_to_matrix_bytes(PyObject *mod, PyObject *layout) {
    Lay L;
    if (!load(layout, &L)) Py_RETURN_NONE;
    PyObject *ba = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)L.out_bits * L.in_bits);
    if (!ba) return NULL;
    char *p = PyByteArray_AS_STRING(ba);
    for (int r = 0; r < L.out_bits; r++)
        for (int c = 0; c < L.in_bits; c++) *p++ = (char)((L.col[c] >> r) & 1);
    return ba;
}

/* ------------------------------------------------------------------------------------------------ */
/* printing: Triton's toString */

typedef struct { char *p; size_t n, cap; } Buf;

static int buf_put(Buf *b, const char *s, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        char *q = PyMem_Realloc(b->p, cap);
        if (!q) { PyErr_NoMemory(); return -1; }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static int buf_str(Buf *b, const char *s) { return buf_put(b, s, strlen(s)); }

static int buf_u64(Buf *b, uint64_t v) {
    char tmp[24];
    int i = 24;
    do { tmp[--i] = (char)('0' + v % 10); v /= 10; } while (v);
    return buf_put(b, tmp + i, (size_t)(24 - i));
}

static int buf_name(Buf *b, PyObject *name) {
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(name, &len);
    if (!s) return -2; /* not encodable: let Python print it */
    return buf_put(b, s, (size_t)len);
}

static int put_outs(Buf *b, const Lay *L) {
    if (buf_str(b, "[")) return -1;
    for (int o = 0; o < L->n_out; o++) {
        int r;
        if (o && buf_str(b, ", ")) return -1;
        if ((r = buf_name(b, PyTuple_GET_ITEM(L->out_names, o)))) return r;
        if (buf_str(b, " (size ") || buf_u64(b, (uint64_t)1 << L->out_k[o]) || buf_str(b, ")")) return -1;
    }
    return buf_str(b, "]");
}

static int format_layout(Buf *b, const Lay *L) {
    int r;
    if (L->n_in == 0) {
        if (L->n_out == 0) return buf_str(b, "\n(empty layout)");
        if (buf_str(b, "\n(empty layout with out-dims ")) return -1;
        if ((r = put_outs(b, L))) return r;
        return buf_str(b, ")");
    }
    if (buf_str(b, "\n")) return -1;
    for (int d = 0; d < L->n_in; d++) {
        PyObject *name = PyTuple_GET_ITEM(L->in_names, d);
        if (buf_str(b, " - ")) return -1;
        if ((r = buf_name(b, name))) return r;
        if (!L->in_len[d]) {
            if (buf_str(b, " is a size 1 dimension\n")) return -1;
            continue;
        }
        for (int i = 0; i < L->in_len[d]; i++) {
            uint64_t v = L->col[L->in_off[d] + i];
            if (i) {
                if (buf_str(b, "\n   ")) return -1;
                if ((r = buf_name(b, name))) return r;
            }
            if (buf_str(b, "=") || buf_u64(b, (uint64_t)1 << i) || buf_str(b, " -> (")) return -1;
            for (int o = 0; o < L->n_out; o++) {
                if (o && buf_str(b, ", ")) return -1;
                if (buf_u64(b, shr(v, L->out_s[o]) & low_mask(L->out_k[o]))) return -1;
            }
            if (buf_str(b, ")")) return -1;
        }
        if (buf_str(b, "\n")) return -1;
    }
    if (buf_str(b, "where out dims are: ")) return -1;
    return put_outs(b, L);
}

/* to_string(layout) -> str (Triton's toString) or None */
static PyObject *ll_to_string(PyObject *mod, PyObject *layout) {
    Lay L;
    if (!load(layout, &L)) Py_RETURN_NONE;
    Buf b = {NULL, 0, 0};
    int r = format_layout(&b, &L);
    PyObject *res = NULL;
    if (r == 0) res = PyUnicode_DecodeUTF8(b.p ? b.p : "", (Py_ssize_t)b.n, "strict");
    else if (r == -2) { PyErr_Clear(); Py_INCREF(Py_None); res = Py_None; }
    PyMem_Free(b.p);
    return res;
}

/* ------------------------------------------------------------------------------------------------ */
/* algebra */

/* supremum(x, y, strict=False): x's and y's names merged, x's order first (layout.supremum) */
static int supremum(PyObject *const *x, int lx, PyObject *const *y, int ly, PyObject **out) {
    int n = 0;
    int same = lx == ly;
    for (int i = 0; same && i < lx; i++) same = name_eq(x[i], y[i]);
    if (same || ly == 0) { for (int i = 0; i < lx; i++) out[n++] = x[i]; return n; }
    if (lx == 0) { for (int j = 0; j < ly; j++) out[n++] = y[j]; return n; }
    int pos_y[MAXD], pos_x[MAXD], common = 0; /* pos_y[i]: index of x[i] in y, or -1 */
    for (int i = 0; i < lx; i++) { pos_y[i] = find_name(y, ly, x[i]); common |= pos_y[i] >= 0; }
    for (int j = 0; j < ly; j++) pos_x[j] = find_name(x, lx, y[j]);
    if (!common) {
        for (int i = 0; i < lx; i++) out[n++] = x[i];
        for (int j = 0; j < ly; j++) out[n++] = y[j];
        return n;
    }
    char taken_x[MAXD] = {0}, taken_y[MAXD] = {0};
    int i = 0, j = 0;
    const long INF = 1L << 30;
    while (i < lx || j < ly) {
        while (i < lx && taken_x[i]) i++;
        while (j < ly && taken_y[j]) j++;
        if (i >= lx && j >= ly) break;
        int take_x;
        if (i < lx && j < ly && pos_y[i] == j) {
            out[n++] = x[i];
            taken_x[i] = 1;
            taken_y[j] = 1;
            i++;
            j++;
            continue;
        }
        long cand_x = (i < lx && pos_y[i] >= 0 && pos_y[i] >= j) ? pos_y[i] : INF;
        long cand_y = (j < ly && pos_x[j] >= 0 && pos_x[j] >= i) ? pos_x[j] : INF;
        if (i < lx && cand_x == INF) take_x = 1;
        else if (j < ly && cand_y == INF) take_x = 0;
        else take_x = cand_x <= cand_y;
        if (take_x) {
            out[n++] = x[i];
            taken_x[i] = 1;
            if (pos_y[i] >= 0) taken_y[pos_y[i]] = 1;
            i++;
        } else {
            out[n++] = y[j];
            taken_y[j] = 1;
            if (pos_x[j] >= 0) taken_x[pos_x[j]] = 1;
            j++;
        }
    }
    return n;
}

/* product(inner, outer) -> inner * outer, or None */
static PyObject *ll_product(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "product takes 2 arguments"); return NULL; }
    Lay A, B;
    if (!load(args[0], &A) || !load(args[1], &B)) Py_RETURN_NONE;
    PyObject *in_names[2 * MAXD], *out_names[2 * MAXD];
    PyObject *const *ain = &PyTuple_GET_ITEM(A.in_names, 0), *const *bin = &PyTuple_GET_ITEM(B.in_names, 0);
    PyObject *const *aout = &PyTuple_GET_ITEM(A.out_names, 0), *const *bout = &PyTuple_GET_ITEM(B.out_names, 0);
    int n_in = supremum(ain, A.n_in, bin, B.n_in, in_names);
    int n_out = supremum(aout, A.n_out, bout, B.n_out, out_names);
    if (n_in > MAXD || n_out > MAXD) Py_RETURN_NONE;
    int out_k[MAXD], out_s[MAXD], a_dst[MAXD], b_dst[MAXD], s = 0;
    for (int o = 0; o < n_out; o++) {
        int ia = find_name(aout, A.n_out, out_names[o]), ib = find_name(bout, B.n_out, out_names[o]);
        int ka = ia >= 0 ? A.out_k[ia] : 0, kb = ib >= 0 ? B.out_k[ib] : 0;
        if (ka + kb > MAX_DIM_LOG2) Py_RETURN_NONE;
        out_k[o] = ka + kb;
        out_s[o] = s;
        s += ka + kb;
        if (ia >= 0) a_dst[ia] = out_s[o];
        if (ib >= 0) b_dst[ib] = out_s[o] + ka;
    }
    if (s > MAXB) Py_RETURN_NONE;
    uint64_t cols[MAXB];
    int in_len[MAXD], c = 0;
    for (int d = 0; d < n_in; d++) {
        int ia = find_name(ain, A.n_in, in_names[d]), ib = find_name(bin, B.n_in, in_names[d]);
        int la = ia >= 0 ? A.in_len[ia] : 0, lb = ib >= 0 ? B.in_len[ib] : 0;
        if (la + lb > MAX_DIM_LOG2 || c + la + lb > MAXB) Py_RETURN_NONE;
        in_len[d] = la + lb;
        for (int t = 0; t < la; t++) {
            uint64_t v = A.col[A.in_off[ia] + t], r = 0;
            for (int o = 0; o < A.n_out; o++) r |= shl(shr(v, A.out_s[o]) & low_mask(A.out_k[o]), a_dst[o]);
            cols[c++] = r;
        }
        for (int t = 0; t < lb; t++) {
            uint64_t v = B.col[B.in_off[ib] + t], r = 0;
            for (int o = 0; o < B.n_out; o++) r |= shl(shr(v, B.out_s[o]) & low_mask(B.out_k[o]), b_dst[o]);
            cols[c++] = r;
        }
    }
    PyObject *in_t = tuple_of(in_names, n_in), *out_t = tuple_of(out_names, n_out), *res = NULL;
    if (in_t && out_t) res = make_layout(in_t, n_in, in_len, cols, out_t, n_out, out_k);
    Py_XDECREF(in_t);
    Py_XDECREF(out_t);
    return res;
}

/* compose(self, outer) -> outer o self, or None */
static PyObject *ll_compose(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "compose takes 2 arguments"); return NULL; }
    Lay S, O;
    if (!load(args[0], &S) || !load(args[1], &O) || S.n_out != O.n_in) Py_RETURN_NONE;
    uint64_t images[MAXB], cols[MAXB];
    int c = 0;
    for (int o = 0; o < S.n_out; o++) {
        int p = find_in_tuple(O.in_names, PyTuple_GET_ITEM(S.out_names, o));
        if (p < 0 || S.out_k[o] > O.in_len[p]) Py_RETURN_NONE;
        for (int t = 0; t < S.out_k[o]; t++) images[c++] = O.col[O.in_off[p] + t];
    }
    for (int j = 0; j < S.in_bits; j++) cols[j] = map_flat(S.col[j], images);
    return make_layout(S.in_names, S.n_in, S.in_len, cols, O.out_names, O.n_out, O.out_k);
}

/* field-wise re-pack: bits [src, src+k) of v go to [dst, dst+k); 0 and *lost if a bit passes bit 63 */
static uint64_t move_field(uint64_t v, int src, int k, int dst, int *lost) {
    uint64_t f = shr(v, src) & low_mask(k);
    if (!f) return 0;
    if (dst + hibit(f) >= 64) { *lost = 1; return 0; }
    return f << dst;
}

/* invert_and_compose core: C with outer(C(x)) == B(x); B's in dims -> outer's in dims. B_in_names is
   the tuple of B's in-dim names (B may be a made-up identity). 1 on success, 0 = not handled / error. */
static int iac(const Lay *B, const Lay *O, int *res_len, uint64_t *res_cols, int *res_out_k) {
    if (B->n_out != O->n_out) return 0;
    Lay A; /* outer with its out dims in B's order */
    int perm[MAXD];
    A.n_in = O->n_in;
    A.n_out = O->n_out;
    A.in_bits = O->in_bits;
    A.in_names = O->in_names;
    A.out_names = B->out_names;
    int s = 0;
    for (int o = 0; o < B->n_out; o++) {
        perm[o] = find_in_tuple(O->out_names, PyTuple_GET_ITEM(B->out_names, o));
        if (perm[o] < 0) return 0;
        for (int q = 0; q < o; q++) if (perm[q] == perm[o]) return 0;
        A.out_k[o] = O->out_k[perm[o]];
        A.out_s[o] = s;
        s += A.out_k[o];
        if (A.out_k[o] < B->out_k[o]) return 0;
    }
    A.out_bits = s;
    for (int d = 0; d < O->n_in; d++) { A.in_len[d] = O->in_len[d]; A.in_off[d] = O->in_off[d]; }
    for (int j = 0; j < O->in_bits; j++) {
        uint64_t v = O->col[j], r = 0;
        for (int o = 0; o < A.n_out; o++) r |= shl(shr(v, O->out_s[perm[o]]) & low_mask(A.out_k[o]), A.out_s[o]);
        A.col[j] = r;
    }
    /* the identity dims (layout._identity_dims) */
    char identity[MAXD] = {0};
    int any_identity = 0, a_index[MAXD];
    for (int d = 0; d < B->n_in; d++) {
        int i = find_in_tuple(A.in_names, PyTuple_GET_ITEM(B->in_names, d));
        a_index[d] = i;
        if (i < 0 || A.in_len[i] != B->in_len[d]) continue;
        int same = 1;
        uint64_t a_mask = 0, b_mask = 0;
        for (int t = 0; t < B->in_len[d] && same; t++) {
            /* B's basis re-packed like A's: A's out dims are at least as large, so it fits (A's re-packed
               like B's would push a coordinate beyond B's size into B's next out dim) */
            uint64_t a = A.col[A.in_off[i] + t], b = B->col[B->in_off[d] + t], moved = 0;
            int lost = 0;
            for (int o = 0; o < A.n_out; o++)
                if (B->out_k[o]) moved |= move_field(b, B->out_s[o], B->out_k[o], A.out_s[o], &lost);
            same = !lost && moved == a;
            a_mask |= a;
            b_mask |= b;
        }
        if (!same) continue;
        int clash = 0;
        for (int e = 0; e < B->n_in && !clash; e++)
            if (e != d)
                for (int t = 0; t < B->in_len[e] && !clash; t++) clash = (B->col[B->in_off[e] + t] & b_mask) != 0;
        for (int e = 0; e < A.n_in && !clash; e++)
            if (e != i)
                for (int t = 0; t < A.in_len[e] && !clash; t++) clash = (A.col[A.in_off[e] + t] & a_mask) != 0;
        if (!clash) { identity[d] = 1; any_identity = 1; }
    }
    /* B's bases re-packed with A's out sizes */
    uint64_t b_cols[MAXB];
    for (int j = 0; j < B->in_bits; j++) {
        uint64_t v = B->col[j], r = 0;
        for (int o = 0; o < B->n_out; o++) r |= shl(shr(v, B->out_s[o]) & low_mask(B->out_k[o]), A.out_s[o]);
        b_cols[j] = r;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt == 1) {
            if (!any_identity) return 0;
            memset(identity, 0, sizeof identity);
        }
        char a_identity[MAXD] = {0};
        for (int d = 0; d < B->n_in; d++) if (identity[d]) a_identity[a_index[d]] = 1;
        uint64_t cols[MAXB];
        int col_bit[MAXB], n = 0;
        for (int e = 0; e < A.n_in; e++)
            if (!a_identity[e])
                for (int t = 0; t < A.in_len[e]; t++) { cols[n] = A.col[A.in_off[e] + t]; col_bit[n++] = A.in_off[e] + t; }
        Elim el;
        elim_build(&el, cols, n);
        int ok = 1;
        for (int d = 0; d < B->n_in && ok; d++) {
            for (int t = 0; t < B->in_len[d] && ok; t++) {
                int j = B->in_off[d] + t;
                if (identity[d]) { res_cols[j] = (uint64_t)1 << (A.in_off[a_index[d]] + t); continue; }
                uint64_t x, r = 0;
                if (!elim_express(&el, b_cols[j], &x)) { ok = 0; break; }
                while (x) { r |= (uint64_t)1 << col_bit[lobit(x)]; x &= x - 1; }
                res_cols[j] = r;
            }
        }
        if (ok) {
            for (int d = 0; d < B->n_in; d++) res_len[d] = B->in_len[d];
            for (int e = 0; e < A.n_in; e++) res_out_k[e] = A.in_len[e];
            return 1;
        }
    }
    return 0;
}

static PyObject *ll_invert_and_compose(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "invert_and_compose takes 2 arguments"); return NULL; }
    Lay B, O;
    int len[MAXD], out_k[MAXD];
    uint64_t cols[MAXB];
    if (!load(args[0], &B) || !load(args[1], &O) || !iac(&B, &O, len, cols, out_k)) Py_RETURN_NONE;
    for (int e = 0; e < O.n_in; e++) if (out_k[e] > MAX_DIM_LOG2) Py_RETURN_NONE;
    return make_layout(B.in_names, B.n_in, len, cols, O.in_names, O.n_in, out_k);
}

/* pseudoinvert(layout) -> identity(out dims).invert_and_compose(layout), or None (not surjective) */
static PyObject *ll_pseudoinvert(PyObject *mod, PyObject *layout) {
    Lay L, I;
    if (!load(layout, &L) || rank_of(L.col, L.in_bits) != L.out_bits) Py_RETURN_NONE;
    I.n_in = I.n_out = L.n_out;
    I.in_names = I.out_names = L.out_names;
    I.in_bits = I.out_bits = L.out_bits;
    for (int o = 0; o < L.n_out; o++) {
        I.in_len[o] = I.out_k[o] = L.out_k[o];
        I.in_off[o] = I.out_s[o] = L.out_s[o];
        for (int t = 0; t < L.out_k[o]; t++) I.col[L.out_s[o] + t] = (uint64_t)1 << (L.out_s[o] + t);
    }
    int len[MAXD], out_k[MAXD];
    uint64_t cols[MAXB];
    if (!iac(&I, &L, len, cols, out_k)) Py_RETURN_NONE;
    for (int e = 0; e < L.n_in; e++) if (out_k[e] > MAX_DIM_LOG2) Py_RETURN_NONE;
    return make_layout(L.out_names, L.n_out, len, cols, L.in_names, L.n_in, out_k);
}

/* invert(layout) -> the inverse of an invertible layout, or None */
static PyObject *ll_invert(PyObject *mod, PyObject *layout) {
    Lay L;
    if (!load(layout, &L) || L.in_bits != L.out_bits) Py_RETURN_NONE;
    return ll_pseudoinvert(mod, layout);
}

/* move_bits(in_bases, bit_map) -> bases with bit i of every vector sent to bit bit_map[i] (< 0: dropped) */
static PyObject *ll_move_bits(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "move_bits takes 2 arguments"); return NULL; }
    PyObject *in_bases = args[0], *bit_map = args[1];
    if (!PyTuple_CheckExact(in_bases) || (!PyList_CheckExact(bit_map) && !PyTuple_CheckExact(bit_map)))
        Py_RETURN_NONE;
    Py_ssize_t nb = PySequence_Fast_GET_SIZE(bit_map), n_in = PyTuple_GET_SIZE(in_bases);
    if (nb > MAXB || n_in > MAXD) Py_RETURN_NONE;
    int map[MAXB], in_len[MAXD], c = 0;
    for (Py_ssize_t i = 0; i < nb; i++) {
        long long m;
        if (!get_int(PySequence_Fast_GET_ITEM(bit_map, i), -(1LL << 40), MAXB - 1, &m)) Py_RETURN_NONE;
        map[i] = m < 0 ? -1 : (int)m;
    }
    uint64_t cols[MAXB];
    for (Py_ssize_t d = 0; d < n_in; d++) {
        PyObject *dim = PyTuple_GET_ITEM(in_bases, d);
        if (!PyTuple_CheckExact(dim) || PyTuple_GET_SIZE(dim) > MAXB - c) Py_RETURN_NONE;
        in_len[d] = (int)PyTuple_GET_SIZE(dim);
        for (int t = 0; t < in_len[d]; t++) {
            uint64_t v, r = 0;
            if (!get_u64(PyTuple_GET_ITEM(dim, t), &v)) Py_RETURN_NONE;
            while (v) {
                int b = lobit(v);
                if (b >= nb) Py_RETURN_NONE;
                if (map[b] >= 0) r |= (uint64_t)1 << map[b];
                v &= v - 1;
            }
            cols[c++] = r;
        }
    }
    return bases_tuple(in_len, (int)n_in, cols);
}

/* ------------------------------------------------------------------------------------------------ */
/* f2 on 64-bit words: NotImplemented when a column is not an int in [0, 2**64) */

static int read_words(PyObject *seq, uint64_t *out, Py_ssize_t max, Py_ssize_t *n) {
    if (!PyList_CheckExact(seq) && !PyTuple_CheckExact(seq)) return 0;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > max) return 0;
    for (Py_ssize_t i = 0; i < len; i++)
        if (!get_u64(PySequence_Fast_GET_ITEM(seq, i), &out[i])) return 0;
    *n = len;
    return 1;
}

#define MAX_WORDS 4096

/* echelon(columns) -> f2.echelon(columns): one vector per highest bit, by decreasing highest bit */
static PyObject *f2_echelon(PyObject *mod, PyObject *seq) {
    static uint64_t words[MAX_WORDS];
    Py_ssize_t n;
    if (!read_words(seq, words, MAX_WORDS, &n)) Py_RETURN_NOTIMPLEMENTED;
    uint64_t piv[MAXB];
    int r = pivots_of(words, n, piv);
    PyObject *out = PyList_New(r);
    if (!out) return NULL;
    for (int h = MAXB - 1, k = 0; h >= 0; h--) {
        if (!piv[h]) continue;
        PyObject *v = PyLong_FromUnsignedLongLong(piv[h]);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k++, v);
    }
    return out;
}

/* rank(columns) -> f2.rank(columns) */
static PyObject *f2_rank(PyObject *mod, PyObject *seq) {
    static uint64_t words[MAX_WORDS];
    Py_ssize_t n;
    if (!read_words(seq, words, MAX_WORDS, &n)) Py_RETURN_NOTIMPLEMENTED;
    uint64_t piv[MAXB];
    return PyLong_FromLong(pivots_of(words, n, piv));
}

/* solve(columns, y) -> f2.solve(columns, y): the pivot-column combination equal to y, or None */
static PyObject *f2_solve(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "solve takes 2 arguments"); return NULL; }
    uint64_t cols[MAXB], y, x;
    Py_ssize_t n;
    if (!read_words(args[0], cols, MAXB, &n) || !get_u64(args[1], &y)) Py_RETURN_NOTIMPLEMENTED;
    Elim e;
    elim_build(&e, cols, (int)n);
    if (!elim_express(&e, y, &x)) Py_RETURN_NONE;
    return PyLong_FromUnsignedLongLong(x);
}

/* ------------------------------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"register", (PyCFunction)(void (*)(void))ll_register, METH_FASTCALL, "register(cls, members): use cls (LinearLayout) and its slots (members: name -> member descriptor); == and hash in C."},
    {"unregister", (PyCFunction)ll_unregister, METH_NOARGS, "unregister(): give LinearLayout its Python == and hash back."},
    {"build_into", (PyCFunction)(void (*)(void))ll_build_into, METH_FASTCALL, "build_into(self, bases, out_dims, require_surjective) -> bool"},
    {"make", (PyCFunction)(void (*)(void))ll_make, METH_FASTCALL, "make(in_names, in_bases, out_names, out_log2) -> LinearLayout | None"},
    {"apply", (PyCFunction)(void (*)(void))ll_apply, METH_FASTCALL, "apply(layout, ins) -> dict | None"},
    {"apply_all_into", (PyCFunction)(void (*)(void))ll_apply_all_into, METH_FASTCALL, "apply_all_into(layout, out) -> bool"},
    {"apply_arrays_into", (PyCFunction)(void (*)(void))ll_apply_arrays_into, METH_FASTCALL, "apply_arrays_into(layout, dims, arrays, outs) -> bool"},
    {"to_matrix_bytes", (PyCFunction)ll_to_matrix_bytes, METH_O, "to_matrix_bytes(layout) -> bytearray | None"},
    {"to_string", (PyCFunction)ll_to_string, METH_O, "to_string(layout) -> str | None"},
    {"product", (PyCFunction)(void (*)(void))ll_product, METH_FASTCALL, "product(inner, outer) -> LinearLayout | None"},
    {"compose", (PyCFunction)(void (*)(void))ll_compose, METH_FASTCALL, "compose(self, outer) -> LinearLayout | None"},
    {"invert_and_compose", (PyCFunction)(void (*)(void))ll_invert_and_compose, METH_FASTCALL, "invert_and_compose(self, outer) -> LinearLayout | None"},
    {"pseudoinvert", (PyCFunction)ll_pseudoinvert, METH_O, "pseudoinvert(layout) -> LinearLayout | None"},
    {"invert", (PyCFunction)ll_invert, METH_O, "invert(layout) -> LinearLayout | None"},
    {"move_bits", (PyCFunction)(void (*)(void))ll_move_bits, METH_FASTCALL, "move_bits(in_bases, bit_map) -> tuple | None"},
    {"echelon", (PyCFunction)f2_echelon, METH_O, "echelon(columns) -> list | NotImplemented"},
    {"rank", (PyCFunction)f2_rank, METH_O, "rank(columns) -> int | NotImplemented"},
    {"solve", (PyCFunction)(void (*)(void))f2_solve, METH_FASTCALL, "solve(columns, y) -> int | None | NotImplemented"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "linear_layouts.core._ccore._ext",
    "Compiled hot paths of linear_layouts (an implementation detail; see linear_layouts.core._ccore).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ext(void) {
    for (int i = 0; i < 64; i++)
        if (!pow2[i] && !(pow2[i] = PyLong_FromUnsignedLongLong((uint64_t)1 << i))) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "ABI_VERSION", ABI_VERSION) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
