/* linear_layouts.ops._claunch: the layout ops' kernel launch in C (optional; ops.driver falls back to ctypes).
 *
 * A Launcher holds one prepared launch: the address of the driver's cuLaunchKernel (or, `dependent`, of
 * cuLaunchKernelEx), the CUfunction, a 1-D grid of `ctas` CTAs of `threads` threads, dynamic shared bytes, and the
 * argument packing (a struct code per parameter among Q I i f, its byte offset, the buffer size) that
 * ops.driver.ArgumentPacking computed. launcher(stream, values) packs the values into a buffer on the C stack,
 * exactly as struct.pack_into with that format would (ranges checked the same way), and calls cuLaunchKernel
 * with the GIL released, or cuLaunchKernelEx with one attribute, programmatic stream serialization (a
 * CUlaunchConfig on the C stack, laid out as cuda.h's); it returns the CUresult. Nothing is shared between
 * calls, so concurrent calls from threads need no lock.
 *
 * Built against Python's limited API (abi3): one binary serves every CPython from 3.10 on.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#define ABI_VERSION 2
/* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (cuda.h). */
#define PROGRAMMATIC_STREAM_SERIALIZATION 6
/* CUDA's limit on a kernel's parameter bytes (4 KiB before 12.1 / Volta; more since, never used by the ops). */
#define MAX_PARAM_BYTES 4096
#define MAX_PARAMS 512

typedef int (*launch_entry)(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned shared, void *stream, void **params, void **extra);

/* cuda.h's CUlaunchAttribute (an id, padding to 8 bytes, a 64-byte value union) and CUlaunchConfig. */
typedef struct {
    int id;
    char pad[4];
    union {
        char bytes[64];
        int flag;
        void *align;
    } value;
} launch_attribute;

typedef struct {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    void *stream;
    launch_attribute *attrs;
    unsigned num_attrs;
} launch_config;

typedef int (*launch_ex_entry)(const launch_config *config, void *function, void **params, void **extra);

typedef struct {
    PyObject_HEAD
    launch_entry entry;
    int dependent;
    void *function;
    unsigned ctas, threads, shared_bytes;
    Py_ssize_t count, size;
    char codes[MAX_PARAMS];
    Py_ssize_t offsets[MAX_PARAMS];
} Launcher;

static unsigned long long as_unsigned(PyObject *value, unsigned long long limit, int *failed) {
    PyObject *index = PyNumber_Index(value);
    if (index == NULL) {
        *failed = 1;
        return 0;
    }
    unsigned long long out = PyLong_AsUnsignedLongLong(index);
    Py_DECREF(index);
    if (out == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_OverflowError, "argument out of range");
        *failed = 1;
        return 0;
    }
    if (out > limit) {
        PyErr_SetString(PyExc_OverflowError, "argument out of range");
        *failed = 1;
    }
    return out;
}

/* Writes `values` into `buffer` by the launcher's packing; 0 on success, -1 with a Python error set. */
static int pack(const Launcher *self, PyObject *values, unsigned char *buffer) {
    PyObject *sequence = PySequence_Tuple(values);
    if (sequence == NULL) return -1;
    Py_ssize_t n = PyTuple_Size(sequence);
    if (n != self->count) {
        PyErr_Format(PyExc_ValueError, "values: the kernel takes %zd arguments, got %zd", self->count, n);
        Py_DECREF(sequence);
        return -1;
    }
    memset(buffer, 0, (size_t)self->size);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = PyTuple_GetItem(sequence, i);
        unsigned char *at = buffer + self->offsets[i];
        int failed = 0;
        switch (self->codes[i]) {
        case 'Q': {
            uint64_t v = (uint64_t)as_unsigned(value, UINT64_MAX, &failed);
            memcpy(at, &v, 8);
            break;
        }
        case 'I': {
            uint32_t v = (uint32_t)as_unsigned(value, UINT32_MAX, &failed);
            memcpy(at, &v, 4);
            break;
        }
        case 'i': {
            PyObject *index = PyNumber_Index(value);
            if (index == NULL) { failed = 1; break; }
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
            Py_DECREF(index);
            if (overflow || v < INT32_MIN || v > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "argument out of range");
                failed = 1;
                break;
            }
            if (v == -1 && PyErr_Occurred()) { failed = 1; break; }
            int32_t w = (int32_t)v;
            memcpy(at, &w, 4);
            break;
        }
        case 'f': {
            double d = PyFloat_AsDouble(value);
            if (d == -1.0 && PyErr_Occurred()) { failed = 1; break; }
            float f = (float)d;
            if (isinf(f) && !isinf(d)) {
                PyErr_SetString(PyExc_OverflowError, "float too large to pack with f format");
                failed = 1;
                break;
            }
            memcpy(at, &f, 4);
            break;
        }
        }
        if (failed) {
            Py_DECREF(sequence);
            return -1;
        }
    }
    Py_DECREF(sequence);
    return 0;
}

static int Launcher_init(Launcher *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"entry", "function", "ctas", "threads", "shared_bytes", "codes", "offsets", "size",
                            "dependent", NULL};
    unsigned long long entry, function;
    unsigned ctas, threads, shared_bytes;
    const char *codes;
    Py_ssize_t ncodes;
    PyObject *offsets;
    Py_ssize_t size;
    int dependent = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KKIIIs#On|p", names, &entry, &function, &ctas, &threads,
                                     &shared_bytes, &codes, &ncodes, &offsets, &size, &dependent))
        return -1;
    if (entry == 0) {
        PyErr_SetString(PyExc_ValueError, "entry: the address of cuLaunchKernel (cuLaunchKernelEx), not null");
        return -1;
    }
    if (ncodes > MAX_PARAMS || size < 0 || size > MAX_PARAM_BYTES) {
        PyErr_Format(PyExc_ValueError, "codes: at most %d parameters of at most %d bytes in all", MAX_PARAMS,
                     MAX_PARAM_BYTES);
        return -1;
    }
    PyObject *sequence = PySequence_Tuple(offsets);
    if (sequence == NULL) return -1;
    if (PyTuple_Size(sequence) != ncodes) {
        Py_DECREF(sequence);
        PyErr_SetString(PyExc_ValueError, "offsets: one per code");
        return -1;
    }
    for (Py_ssize_t i = 0; i < ncodes; i++) {
        char code = codes[i];
        Py_ssize_t width = code == 'Q' ? 8 : 4;
        Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GetItem(sequence, i));
        if (offset == -1 && PyErr_Occurred()) {
            Py_DECREF(sequence);
            return -1;
        }
        if (code != 'Q' && code != 'I' && code != 'i' && code != 'f') {
            Py_DECREF(sequence);
            PyErr_Format(PyExc_ValueError, "codes: %c is not one of Q I i f", code);
            return -1;
        }
        if (offset < 0 || offset % width || offset + width > size) {
            Py_DECREF(sequence);
            PyErr_Format(PyExc_ValueError, "offsets: parameter %zd at %zd does not fit %zd aligned bytes in %zd", i,
                         offset, width, size);
            return -1;
        }
        self->codes[i] = code;
        self->offsets[i] = offset;
    }
    Py_DECREF(sequence);
    self->entry = (launch_entry)(uintptr_t)entry;
    self->dependent = dependent;
    self->function = (void *)(uintptr_t)function;
    self->ctas = ctas;
    self->threads = threads;
    self->shared_bytes = shared_bytes;
    self->count = ncodes;
    self->size = size;
    return 0;
}

/* launcher(stream, values) -> CUresult */
static PyObject *Launcher_call(Launcher *self, PyObject *args, PyObject *kwargs) {
    PyObject *stream_object, *values;
    if (kwargs != NULL && PyDict_Size(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "a Launcher takes (stream, values)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO", &stream_object, &values)) return NULL;
    int failed = 0;
    unsigned long long stream = as_unsigned(stream_object, UINT64_MAX, &failed);
    if (failed) return NULL;
    _Alignas(16) unsigned char buffer[MAX_PARAM_BYTES + 8];
    void *params[MAX_PARAMS];
    if (pack(self, values, buffer) < 0) return NULL;
    for (Py_ssize_t i = 0; i < self->count; i++) params[i] = buffer + self->offsets[i];
    int status;
    if (self->dependent) {
        launch_attribute attribute;
        memset(&attribute, 0, sizeof attribute);
        attribute.id = PROGRAMMATIC_STREAM_SERIALIZATION;
        attribute.value.flag = 1;
        launch_config config = {self->ctas, 1, 1, self->threads, 1, 1, self->shared_bytes,
                                (void *)(uintptr_t)stream, &attribute, 1};
        launch_ex_entry entry = (launch_ex_entry)(void *)self->entry;
        Py_BEGIN_ALLOW_THREADS
        status = entry(&config, self->function, params, NULL);
        Py_END_ALLOW_THREADS
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = self->entry(self->function, self->ctas, 1, 1, self->threads, 1, 1, self->shared_bytes,
                             (void *)(uintptr_t)stream, params, NULL);
        Py_END_ALLOW_THREADS
    }
    return PyLong_FromLong(status);
}

/* launcher.pack(values) -> bytes: the parameter buffer a launch with `values` passes (for tests). */
static PyObject *Launcher_pack(Launcher *self, PyObject *values) {
    unsigned char buffer[MAX_PARAM_BYTES + 8];
    if (pack(self, values, buffer) < 0) return NULL;
    return PyBytes_FromStringAndSize((const char *)buffer, self->size);
}

static PyMethodDef Launcher_methods[] = {
    {"pack", (PyCFunction)Launcher_pack, METH_O, "pack(values) -> bytes: the parameter buffer of a launch"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Launcher_slots[] = {
    {Py_tp_doc, "Launcher(entry, function, ctas, threads, shared_bytes, codes, offsets, size, dependent=False): "
                "one prepared launch; launcher(stream, values) calls cuLaunchKernel (dependent: cuLaunchKernelEx "
                "with programmatic stream serialization) and returns its CUresult."},
    {Py_tp_init, Launcher_init},
    {Py_tp_call, Launcher_call},
    {Py_tp_methods, Launcher_methods},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL},
};

static PyType_Spec Launcher_spec = {
    "linear_layouts.ops._claunch.Launcher", sizeof(Launcher), 0, Py_TPFLAGS_DEFAULT, Launcher_slots,
};

static int exec_module(PyObject *module) {
    PyObject *type = PyType_FromSpec(&Launcher_spec);
    if (type == NULL) return -1;
    if (PyModule_AddObject(module, "Launcher", type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return PyModule_AddIntConstant(module, "ABI_VERSION", ABI_VERSION);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_claunch", "The layout ops' kernel launch in C (see ops.driver).", 0, NULL,
    module_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__claunch(void) { return PyModuleDef_Init(&module_def); }
