/*
 * ragrade._accel: optional C helpers for ingesting nested Python dicts.
 *
 * Walking {query: {doc: score}} with PyDict_Next is the one step that NumPy cannot vectorise; these
 * helpers do it in a single pass with no per-item Python calls. Everything else stays in NumPy.
 * If this module fails to build, ragrade falls back to equivalent pure-Python code (same results).
 *
 * Status codes (scan): 0 ok, 1 an element is not a dict, 2 a key is not exactly str, 3 a value is not
 *     convertible to float (or is a boolean: Python's bool or NumPy's bool_), 4 a key is the empty
 *     string, 5 a dict changed size during the scan, 6 a key holds a NUL character (ids never do).
 *
 * rank_in_segments(sorted_desc, lo, hi, target, above, upto) -> None
 *     For each i, within sorted_desc[lo[i]:hi[i]] (descending): above[i] = first index whose value is
 *     <= target[i], upto[i] = first index whose value is < target[i] (binary searches).
 *
 * prefixes8(off, data, out) -> None
 *     out[k] = the first 8 bytes of string k (int64 offsets into data), zero-padded, as a uint64.
 *
 * match_segments(run_off, run_data, width, row_base, seg_off, seg_to_grp, grp_off, gold_off, gold_data,
 *                gold_prefix, out, seg_begin, seg_end) -> int
 *     Run strings are one Arrow chunk: offsets (`width` 4 or 8 bytes) into a data buffer; run row r
 *     (numbered across all chunks) is run_data[run_off[r - row_base] : run_off[r - row_base + 1]]. Row r
 *     belongs to segment s (seg_off[s] <= r < seg_off[s+1]); g = seg_to_grp[s] is its gold group
 *     (-1: none), holding gold strings grp_off[g] .. grp_off[g+1] (int64 offsets; gold_prefix from
 *     prefixes8); seg_off must not decrease, and every segment is checked before any row is written.
 *     out[r] = index of the
 *     gold string equal to row r, or -1. Only segments seg_begin..seg_end-1 are done, and they must lie
 *     in this chunk (the GIL is released: callers may split the work across threads). Returns the
 *     number of matched rows. A linear scan with an 8-byte prefix check: gold groups are small (a
 *     query's judgments).
 *
 * scan_trec(buf, begin, end, ncols, numcol, doccol, release, vals, doc_off, doc_data, seg_row, q_off,
 *           q_data, state) -> None
 *     A TREC run/qrels tokenizer fused with what the engine needs from it, for buf[begin:end] (whole
 *     lines). Fields are separated by exactly one space or one tab; column 0 is the query, `doccol` the
 *     document, `numcol` the number; the others are only counted. Empty lines are skipped. Writes, from the
 *     positions held in `state` (int64[8]: rows, doc bytes, segments, query bytes, previous query's
 *     start and length in buf, status, error position), the numbers (float64), the document ids as an
 *     Arrow large_string layout (doc_off int64, doc_data), and one entry per run of equal query ids
 *     (seg_row: its first row; q_off/q_data: its id, large_string layout). doc_off[rows] and
 *     q_off[segments] are written on return, so each layout is complete. Stops with status 1 (error
 *     position: the line, or the stray byte) at anything irregular: another whitespace or control
 *     byte, an id that is not valid UTF-8, a wrong field count, an empty field, a number outside the
 *     plain decimal grammar (which spells no NaN or infinity); the caller then takes its careful path,
 *     which normalises the line or reports it. Status 2:
 *     an output is too small. Status 3: the mapped file shrank under the scan (SIGBUS caught; nothing else
 *     of the state is written). With `release`, pages already read are dropped from the mapping as the
 *     scan goes, so the resident set does not grow with the file: `buf` must then be a FileMap (the
 *     module's own read-only shared file mapping, below), else ValueError. A line whose first byte is
 *     '#' (a comment, as trec_eval reads it) also stops the scan with status 1. The state passed in is
 *     checked (positions within the outputs and the buffer) before anything is written.
 *
 * first_duplicate_in_segments(off, data, seg_off) -> int
 *     Strings in the Arrow layout (int64 offsets into data) grouped in segments (rows seg_off[s] ..
 *     seg_off[s+1]-1). The first row whose string equals an earlier row's of the same segment, or -1.
 *     One open-addressing hash table (FNV-1a), sized for the largest segment and reused; GIL released.
 *
 * sort_segments_desc(scores, offsets, out, seg_begin, seg_end) -> None
 *     For segments seg_begin..seg_end-1 (rows offsets[s] .. offsets[s+1]-1 of float64 scores): out holds
 *     each segment's rows ordered by descending score, equal scores in row order (a stable merge
 *     sort per segment; insertion sort for short ones). The GIL is released.
 *
 * find_odd_whitespace(buffer) -> int
 *     Index of the first tab, CR, VT or FF byte in the buffer, or -1.
 *
 * first_nul(ids) -> int
 *     Index of the first str of ids (a list or an object array) holding the character U+0000, or -1.
 *
 * str_ids(ids) -> (bool, int)
 *     Whether every item of ids (a list or an object array) is a str, and first_nul(ids) when so (else -1).
 *
 * features() -> dict
 *     What this build has: sse2, file_map, page_release, address_sanitizer (bools).
 *
 * FileMap(fd)
 *     A read-only, shared mapping of a whole (non-empty, regular) file, through the buffer protocol;
 *     find(sub, start, end), close(), len(), context manager. POSIX only.
 *
 * MappingFault
 *     An OSError: FileMap.find or find_odd_whitespace touched a page past the end of a mapped file that
 *     another process truncated meanwhile (SIGBUS, caught: see "The read guard"). scan_trec reports the same
 *     as status 3. POSIX only.

 *
 * scan(dicts, keys, which, find, find_idx) -> (status, counts, values, found[, keys])
 *     One call for everything the dict path needs: counts (bytes of int64, one per dict), values
 *     (bytearray of float64, insertion order), found (bytearray of float64, one per find_idx entry:
 *     dicts[which[j]].get(find[find_idx[j]], nan), done right after that dict is scanned; which must be
 *     non-decreasing int64, else ValueError; find is an object array). `keys` is None or a fresh object
 *     array (numpy, through the buffer protocol) with room for every key, or a callable that makes one
 *     given the number of keys (that array is then returned too, fifth): each key is stored at its
 *     value's position (the reference it held, None, is released). A value's __float__ or a key's __eq__
 *     may run any Python code: the list's size is re-checked for every dict, and references to the
 *     dict, its key and value and the lookup key are held across such calls (status 5 when sizes
 *     changed).
 *
 * Every function checks the sizes and offsets of the buffers it is given before it reads or writes
 * through them (all segments first, then the work), and raises ValueError when they are inconsistent.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif
#if defined(_MSC_VER)
#include <intrin.h>
static inline int ctz64(uint64_t x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
static inline int clz64(uint64_t x) { unsigned long i; _BitScanReverse64(&i, x); return 63 - (int)i; }
#else
static inline int ctz64(uint64_t x) { return __builtin_ctzll(x); }
static inline int clz64(uint64_t x) { return __builtin_clzll(x); }
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

/* -- FileMap: the module's own read-only mapping of a file ------------------------------------------
 *
 * FileMap(fd) maps the whole file (size > 0) read-only and shared (PROT_READ, MAP_SHARED) and exposes it
 * through the buffer protocol, read-only. scan_trec drops pages already read (madvise MADV_DONTNEED) only
 * from such a mapping: on a shared, read-only file mapping that only frees memory (the pages are read
 * from the file again if touched), whereas on any other buffer (a bytes object, an anonymous or private
 * mapping) it would destroy data. Methods: find(sub, start=0, end=size) -> int, close(); len(); a
 * context manager. POSIX only (elsewhere ragrade maps files with Python's portable mmap and drops no
 * pages).
 */
#if defined(__unix__) || defined(__APPLE__)
#define HAVE_FILEMAP 1

/* -- The read guard: a mapped file that shrinks while it is read ------------------------------------
 *
 * Another process may truncate a file while it is mapped here: the next read of a page past its new end
 * raises SIGBUS, whose default action kills the process without a word. While a scanner reads a mapping
 * (between bus_guard_enter and bus_guard_leave, around the reads of scan_trec, FileMap.find and
 * find_odd_whitespace) a handler jumps back into the reading call, which then reports the fault: status 3
 * for scan_trec, MappingFault (an OSError) for the others, and the caller says "the file changed while it
 * was read". A SIGBUS raised by a thread that is not inside a guarded read goes to the handler that was
 * there before (the default action included). The handler is installed only while at least one guarded
 * read runs (a count under a mutex; the previous one is restored after): importing the module changes no
 * signal disposition. The jump target is per thread (several threads scan one file at once).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#define HAVE_BUS_GUARD 1
#if defined(__GNUC__)
#define BUS_TLS __thread __attribute__((tls_model("initial-exec")))
#else
#define BUS_TLS _Thread_local
#endif
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;
static int bus_users = 0;
static struct sigaction bus_previous;
static BUS_TLS sigjmp_buf *volatile bus_jump = NULL;  /* volatile: read by the handler */
static PyObject *MappingFault = NULL;

static void bus_handler(int sig, siginfo_t *info, void *ctx) {
    sigjmp_buf *jump = bus_jump;
    if (jump != NULL) {
        bus_jump = NULL;
        siglongjmp(*jump, 1);
    }
    if (bus_previous.sa_flags & SA_SIGINFO) {
        if (bus_previous.sa_sigaction != NULL) bus_previous.sa_sigaction(sig, info, ctx);
    } else if (bus_previous.sa_handler != SIG_DFL && bus_previous.sa_handler != SIG_IGN) {
        bus_previous.sa_handler(sig);
    } else {  /* the default action: on return the faulting access runs again and the signal kills */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
    }
}

/* Install the handler (the first guarded read); 0 if it could not be (then reads go unguarded). */
static int bus_guard_enter(void) {
    int ok = 1;
    pthread_mutex_lock(&bus_lock);
    if (bus_users == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = bus_handler;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        ok = sigaction(SIGBUS, &sa, &bus_previous) == 0;
    }
    if (ok) bus_users++;
    pthread_mutex_unlock(&bus_lock);
    return ok;
}

static void bus_guard_leave(void) {
    pthread_mutex_lock(&bus_lock);
    if (--bus_users == 0) sigaction(SIGBUS, &bus_previous, NULL);
    pthread_mutex_unlock(&bus_lock);
}

/* A guarded read: `faulted` is set to 1 if the code given touched a page past the end of a shrunken mapping
 * (its own variables are then indeterminate and must not be used). sigsetjmp saves the signal mask,
 * which the jump restores (SIGBUS is blocked while its handler runs). */
#define GUARDED_READ(faulted, ...) do {                                     \
        sigjmp_buf guard_jump_;                                             \
        int guarded_ = bus_guard_enter();                                   \
        (faulted) = 0;                                                      \
        if (guarded_ && sigsetjmp(guard_jump_, 1) != 0) {                   \
            (faulted) = 1;                                                  \
        } else {                                                            \
            if (guarded_) bus_jump = &guard_jump_;                          \
            __VA_ARGS__                                                     \
        }                                                                   \
        bus_jump = NULL;                                                    \
        if (guarded_) bus_guard_leave();                                    \
    } while (0)

static PyObject *mapping_fault(void) {
    PyErr_SetString(MappingFault, "the mapped file shrank while it was read (SIGBUS caught)");
    return NULL;
}

typedef struct {
    PyObject_HEAD
    unsigned char *addr;
    Py_ssize_t size;
    Py_ssize_t exports;
} FileMapObject;

static PyTypeObject FileMapType;

static PyObject *filemap_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    int fd;
    static char *kwlist[] = {"fd", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "i", kwlist, &fd)) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) return PyErr_SetFromErrno(PyExc_OSError);
    if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > (uint64_t)PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_ValueError, "FileMap: not a non-empty regular file");
        return NULL;
    }
    void *addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) return PyErr_SetFromErrno(PyExc_OSError);
    FileMapObject *self = (FileMapObject *)type->tp_alloc(type, 0);
    if (self == NULL) { munmap(addr, (size_t)st.st_size); return NULL; }
    self->addr = (unsigned char *)addr;
    self->size = (Py_ssize_t)st.st_size;
    self->exports = 0;
    return (PyObject *)self;
}

static void filemap_unmap(FileMapObject *self) {
    if (self->addr != NULL) {
        munmap(self->addr, (size_t)self->size);
        self->addr = NULL;
    }
}

static void filemap_dealloc(FileMapObject *self) {
    filemap_unmap(self);  /* no buffer can be exported here: each export holds a reference */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int filemap_getbuffer(FileMapObject *self, Py_buffer *view, int flags) {
    if (self->addr == NULL) {
        PyErr_SetString(PyExc_ValueError, "FileMap is closed");
        view->obj = NULL;
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, self->addr, self->size, 1, flags) < 0) return -1;
    self->exports++;
    return 0;
}

static void filemap_releasebuffer(FileMapObject *self, Py_buffer *view) {
    (void)view;
    self->exports--;
}

static PyBufferProcs filemap_as_buffer = {(getbufferproc)filemap_getbuffer, (releasebufferproc)filemap_releasebuffer};

static PyObject *filemap_close(FileMapObject *self, PyObject *unused) {
    if (self->exports > 0) {
        PyErr_SetString(PyExc_BufferError, "FileMap: cannot close while a buffer is exported");
        return NULL;
    }
    filemap_unmap(self);
    Py_RETURN_NONE;
}

static PyObject *filemap_find(FileMapObject *self, PyObject *args) {
    Py_buffer sub;
    Py_ssize_t start = 0, end = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTuple(args, "y*|nn", &sub, &start, &end)) return NULL;
    if (self->addr == NULL) {
        PyBuffer_Release(&sub);
        PyErr_SetString(PyExc_ValueError, "FileMap is closed");
        return NULL;
    }
    if (end > self->size) end = self->size;
    if (start < 0) start = 0;
    volatile Py_ssize_t found = -1;
    Py_ssize_t k = sub.len;
    const unsigned char *needle = (const unsigned char *)sub.buf;
    int faulted;
    GUARDED_READ(faulted, {
        if (k == 0) {
            found = start <= end ? start : -1;
        } else {
            for (Py_ssize_t i = start; i + k <= end;) {
                const unsigned char *hit = memchr(self->addr + i, needle[0], (size_t)(end - k + 1 - i));
                if (hit == NULL) break;
                i = hit - self->addr;
                if (memcmp(hit, needle, (size_t)k) == 0) { found = i; break; }
                i++;
            }
        }
    });
    PyBuffer_Release(&sub);
    if (faulted) return mapping_fault();
    return PyLong_FromSsize_t(found);
}

static PyObject *filemap_enter(PyObject *self, PyObject *unused) {
    Py_INCREF(self);
    return self;
}

static PyObject *filemap_exit(FileMapObject *self, PyObject *args) {
    return filemap_close(self, NULL);
}

static Py_ssize_t filemap_len(FileMapObject *self) {
    return self->addr == NULL ? 0 : self->size;
}

static PySequenceMethods filemap_as_sequence = {(lenfunc)filemap_len};

static PyMethodDef filemap_methods[] = {
    {"close", (PyCFunction)filemap_close, METH_NOARGS, "Unmap the file."},
    {"find", (PyCFunction)filemap_find, METH_VARARGS, "find(sub, start=0, end=size) -> first index or -1."},
    {"__enter__", (PyCFunction)filemap_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)filemap_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FileMapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ragrade._accel.FileMap",
    .tp_basicsize = sizeof(FileMapObject),
    .tp_dealloc = (destructor)filemap_dealloc,
    .tp_as_sequence = &filemap_as_sequence,
    .tp_as_buffer = &filemap_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "FileMap(fd): a read-only, shared memory mapping of a whole file (see _accel.c).",
    .tp_methods = filemap_methods,
    .tp_new = filemap_new,
};

static int is_filemap(PyObject *obj) { return Py_IS_TYPE(obj, &FileMapType); }
#else
#define HAVE_FILEMAP 0
#define HAVE_BUS_GUARD 0
#define GUARDED_READ(faulted, ...) do { (faulted) = 0; __VA_ARGS__ } while (0)
static PyObject *mapping_fault(void) { return NULL; }
static int is_filemap(PyObject *obj) { (void)obj; return 0; }
#endif

/* -- ids: the id rule on the dict path (NUL characters in keys, booleans as values) ----------------
   ragrade's id rule (ragrade.data.ids) refuses ids holding a NUL character, and its value rule refuses
   booleans as grades or scores; the scan of dicts stops at either (status 6 or 3), so that the careful
   path names the query, the document and the value. */

/* Whether c[0..len) (len > 0) holds a zero byte. Ids are short: two words that overlap to cover them
   all (8 bytes for 8 to 16 bytes, 4 for 4 to 7), read within the string, no loop; longer ids 8 bytes at
   a time. */
#define ZERO_BYTE64(w) (((w) - 0x0101010101010101ULL) & ~(w) & 0x8080808080808080ULL)
#define ZERO_BYTE32(w) (((w) - 0x01010101U) & ~(w) & 0x80808080U)

static inline int bytes_have_nul(const unsigned char *c, Py_ssize_t len) {
    if (len >= 8) {
        uint64_t a, b;
        Py_ssize_t i = 0;
        for (; len - i > 16; i += 8) {
            memcpy(&a, c + i, 8);
            if (ZERO_BYTE64(a)) return 1;
        }
        memcpy(&a, c + i, 8);
        memcpy(&b, c + len - 8, 8);
        return (ZERO_BYTE64(a) | ZERO_BYTE64(b)) != 0;
    }
    if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, c, 4);
        memcpy(&b, c + len - 4, 4);
        return (ZERO_BYTE32(a) | ZERO_BYTE32(b)) != 0;
    }
    return c[0] == 0 || c[len >> 1] == 0 || c[len - 1] == 0;  /* 1..3: these are all the bytes */
}

/* Whether compact ASCII str k of length 1..16 holds a zero byte. The 16 bytes that end with its last
   character are read in one load: they lie within the object, as at least 40 bytes of its own header
   (sizeof(PyASCIIObject)) precede the characters; the bits of the header bytes are shifted out. This
   runs for every key of every scanned dict, right after the key's length was read (the characters lie
   on that cache line): the fewer instructions, the more keys the processor keeps in flight. */
static inline int short_ascii_has_nul(PyObject *k, Py_ssize_t len) {
    const unsigned char *end = (const unsigned char *)k + sizeof(PyASCIIObject) + len;
#if defined(HAVE_SSE2)
    __m128i w = _mm_loadu_si128((const __m128i *)(end - 16));
    uint32_t zero = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_setzero_si128()));
    /* bit i: byte i of the 16, the characters being the last len: shifted to bits 16.. and kept. (Two
       shifts, no comparison: a shift right by 16 - len, then != 0, was 5 ns more per key on 10M keys
       drawn from a million ids, where every instruction here counts.) */
    return (int)((zero << len) >> 16);
#else
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
    uint64_t a, b;
    memcpy(&a, end - 16, 8);
    memcpy(&b, end - 8, 8);
    a = ~(((a & low7) + low7) | a | low7);  /* 0x80 in each zero byte, exactly (no borrow across bytes) */
    b = ~(((b & low7) + low7) | b | low7);
    if (PY_LITTLE_ENDIAN) {  /* byte i of a word is bits 8i..8i+7: keep the last len bytes of the 16 */
        if (len <= 8) return (b >> (64 - 8 * len)) != 0;
        return b != 0 || (a >> (128 - 8 * len)) != 0;
    }
    if (len <= 8) return (b << (64 - 8 * len)) != 0;
    return b != 0 || (a << (128 - 8 * len)) != 0;
#endif
}

/* Whether str k (exact, of length len > 0, ready) holds the character U+0000. */
static inline int str_has_nul(PyObject *k, Py_ssize_t len) {
    if (len <= 16 && PyUnicode_IS_COMPACT_ASCII(k)) return short_ascii_has_nul(k, len);
    if (PyUnicode_IS_COMPACT_ASCII(k))  /* nearly every id: the characters follow the header */
        return bytes_have_nul((const unsigned char *)(((PyASCIIObject *)k) + 1), len);
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(k) < 0) { PyErr_Clear(); return 1; }  /* a legacy string (never made by ragrade) */
#endif
    const void *data = PyUnicode_DATA(k);
    switch (PyUnicode_KIND(k)) {
    case PyUnicode_1BYTE_KIND:
        return bytes_have_nul((const unsigned char *)data, len);
    case PyUnicode_2BYTE_KIND: {
        const Py_UCS2 *u = (const Py_UCS2 *)data;
        for (Py_ssize_t i = 0; i < len; i++) if (u[i] == 0) return 1;
        return 0;
    }
    default: {
        const Py_UCS4 *u = (const Py_UCS4 *)data;
        for (Py_ssize_t i = 0; i < len; i++) if (u[i] == 0) return 1;
        return 0;
    }
    }
}

/* Whether v is a boolean that is not a float: Python's bool, or NumPy's bool_ (recognised by its type
   name, "numpy.bool" since NumPy 2, "numpy.bool_" before, as this module does not link NumPy). Only
   values that are neither an exact float nor an exact int get here: the fast cases pay nothing. */
static int is_bool_value(PyObject *v) {
    if (PyBool_Check(v)) return 1;
    if (PyFloat_Check(v) || PyLong_Check(v)) return 0;  /* numpy.float64 (a float), int subclasses */
    const char *name = Py_TYPE(v)->tp_name;
    return name != NULL && (strcmp(name, "numpy.bool") == 0 || strcmp(name, "numpy.bool_") == 0);
}
/* The items of `ids`, a list or a 1-D object array (through the buffer protocol, released by the caller
   when 1 is returned): 0 or 1, or -1 with an exception set. */
static int ids_items(PyObject *ids, const char *fn, Py_buffer *b, PyObject *const **items, Py_ssize_t *n) {
    if (PyList_Check(ids)) {
        *items = (PyObject *const *)PySequence_Fast_ITEMS(ids);
        *n = PyList_GET_SIZE(ids);
        return 0;
    }
    if (PyObject_GetBuffer(ids, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (b->format == NULL || strcmp(b->format, "O") != 0 || b->itemsize != (Py_ssize_t)sizeof(PyObject *)) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_TypeError, "%s: ids must be a list or an object array", fn);
        return -1;
    }
    *items = (PyObject *const *)b->buf;
    *n = b->len / (Py_ssize_t)sizeof(PyObject *);
    return 1;
}

/* The index of the first str of items[0..n) holding U+0000, or -1; items that are not str are passed over,
   or, with `all_str` not NULL, end the search: *all_str is then 0 (else 1). No Python code runs. */
static Py_ssize_t items_first_nul(PyObject *const *items, Py_ssize_t n, int *all_str) {
    Py_ssize_t found = -1;
    if (all_str != NULL) *all_str = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = items[i];
        if (s == NULL || !PyUnicode_Check(s)) {
            if (all_str == NULL) continue;
            *all_str = 0;
            return -1;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        if (found < 0 && len > 0 && str_has_nul(s, len)) {
            found = i;
            if (all_str == NULL) return found;
        }
    }
    return found;
}

/* first_nul(ids): the index of the first str of `ids` (a list, or a 1-D object array) holding the
   character U+0000, or -1; items that are not str are passed over. */
static PyObject *ids_first_nul(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    PyObject *const *items;
    Py_ssize_t n;
    int got = ids_items(arg, "first_nul", &b, &items, &n);
    if (got < 0) return NULL;
    Py_ssize_t found = items_first_nul(items, n, NULL);
    if (got) PyBuffer_Release(&b);
    return PyLong_FromSsize_t(found);
}

/* str_ids(ids) -> (all_str, first_nul): whether every item of `ids` (a list, or a 1-D object array) is a
   str (subclasses included), and the index of the first holding U+0000 (-1: none; also -1 when not all
   are str: such ids are converted, and checked, by the caller's other path). One pass, for what the
   callers asked in two (the kind of the ids, then a search for NUL): each id's object is read once. */
static PyObject *ids_str_ids(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer b;
    PyObject *const *items;
    Py_ssize_t n;
    int got = ids_items(arg, "str_ids", &b, &items, &n), all_str;
    if (got < 0) return NULL;
    Py_ssize_t found = items_first_nul(items, n, &all_str);
    if (got) PyBuffer_Release(&b);
    return Py_BuildValue("(Nn)", PyBool_FromLong(all_str), found);
}
/* -- end of ids -------------------------------------------------------------------------------------- */

/* Append the values of dict d to out[*n..] (and its keys to the list `keys` if not NULL, at the same
   positions); 0 ok, else a status code (see above). The position is kept in a local (PyDict_Next, an
   outside function, would make the compiler reload and store it for every key). */
static long scan_one(PyObject *d, double *out, Py_ssize_t *n, Py_ssize_t cap, PyObject **keys) {
    if (!PyDict_CheckExact(d)) return 1;
    Py_ssize_t p = 0, i = *n;
    PyObject *k, *v;
    long status = 0;
    while (PyDict_Next(d, &p, &k, &v)) {
        if (!PyUnicode_CheckExact(k)) { status = 2; break; }
        Py_ssize_t klen = PyUnicode_GET_LENGTH(k);
        if (klen == 0) { status = 4; break; }
        if (str_has_nul(k, klen)) { status = 6; break; }
        if (i >= cap) { status = 5; break; }
        double x;
        if (PyFloat_CheckExact(v)) {  /* exact float or int: no Python code runs, k and v stay alive */
            x = PyFloat_AS_DOUBLE(v);
        } else if (PyLong_CheckExact(v)) {  /* no temporary float object, unlike PyFloat_AsDouble */
            x = PyLong_AsDouble(v);
            if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); status = 3; break; }
        } else {
            if (is_bool_value(v)) { status = 3; break; }
            /* k and v are borrowed from d. Any other value is converted by its own __float__ /
               __index__, which may run any Python code, including code that changes d and so frees k
               or v: hold references to both across the call. */
            Py_INCREF(k);
            Py_INCREF(v);
            x = PyFloat_AsDouble(v);
            Py_DECREF(v);
            if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); Py_DECREF(k); status = 3; break; }
            if (i >= cap) { Py_DECREF(k); status = 5; break; }
            if (keys != NULL) {  /* a slot of an object array: holds a reference (None when fresh) */
                PyObject *old = keys[i];
                keys[i] = k;  /* the reference taken above moves into the slot */
                Py_XDECREF(old);
            } else {
                Py_DECREF(k);
            }
            out[i++] = x;
            continue;
        }
        if (keys != NULL) {
            PyObject *old = keys[i];
            Py_INCREF(k);
            keys[i] = k;
            Py_XDECREF(old);
        }
        out[i++] = x;
    }
    *n = i;
    return status;
}

static int get_buffers(PyObject **objs, Py_buffer *bufs, int n, int writable_from) {
    for (int i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | (i >= writable_from ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objs[i], &bufs[i], flags) < 0) {
            for (int j = 0; j < i; j++) PyBuffer_Release(&bufs[j]);
            return -1;
        }
    }
    return 0;
}

static PyObject *rank_in_segments(PyObject *self, PyObject *args) {
    PyObject *objs[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5])) return NULL;
    Py_buffer b[6];
    if (get_buffers(objs, b, 6, 4) < 0) return NULL;
    const double *v = (const double *)b[0].buf;
    const int64_t *lo = (const int64_t *)b[1].buf, *hi = (const int64_t *)b[2].buf;
    const double *t = (const double *)b[3].buf;
    int64_t *above = (int64_t *)b[4].buf, *upto = (int64_t *)b[5].buf;
    Py_ssize_t nv = b[0].len / 8, m = b[3].len / 8;
    int ok = b[1].len / 8 >= m && b[2].len / 8 >= m && b[4].len / 8 >= m && b[5].len / 8 >= m;
    for (Py_ssize_t i = 0; ok && i < m; i++) {
        int64_t a = lo[i], z = hi[i];
        if (a < 0 || z > nv || a > z) { ok = 0; break; }
        double x = t[i];
        int64_t l = a, h = z;
        while (l < h) { int64_t mid = l + (h - l) / 2; if (v[mid] > x) l = mid + 1; else h = mid; }
        above[i] = l;
        h = z;
        while (l < h) { int64_t mid = l + (h - l) / 2; if (v[mid] >= x) l = mid + 1; else h = mid; }
        upto[i] = l;
    }
    for (int j = 0; j < 6; j++) PyBuffer_Release(&b[j]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "rank_in_segments: bad bounds or buffer sizes");
        return NULL;
    }
    Py_RETURN_NONE;
}

static inline uint64_t prefix8(const char *p, int64_t len) {
    uint64_t x = 0;
    memcpy(&x, p, (size_t)(len < 8 ? len : 8));
    return x;
}

static inline int64_t off_at(const void *p, int width, int64_t i) {
    return width == 4 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

static PyObject *prefixes8(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "OOO", &objs[0], &objs[1], &objs[2])) return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, b, 3, 2) < 0) return NULL;
    const int64_t *off = (const int64_t *)b[0].buf;
    const char *data = (const char *)b[1].buf;
    uint64_t *out = (uint64_t *)b[2].buf;
    Py_ssize_t n = b[0].len / 8 - 1;
    int ok = n >= 0 && b[2].len / 8 >= n;
    for (Py_ssize_t k = 0; ok && k < n; k++) {
        int64_t a = off[k], len = off[k + 1] - off[k];
        if (a < 0 || len < 0 || a + len > b[1].len) { ok = 0; break; }
        out[k] = prefix8(data + a, len);
    }
    for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "prefixes8: inconsistent offsets");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *match_segments(PyObject *self, PyObject *args) {
    PyObject *objs[9];
    int width;
    long long row_base, seg_begin, seg_end;
    if (!PyArg_ParseTuple(args, "OOiLOOOOOOOLL", &objs[0], &objs[1], &width, &row_base, &objs[2], &objs[3],
                          &objs[4], &objs[5], &objs[6], &objs[8], &objs[7], &seg_begin, &seg_end))
        return NULL;
    if (width != 4 && width != 8) {
        PyErr_SetString(PyExc_ValueError, "match_segments: offsets must be 4 or 8 bytes wide");
        return NULL;
    }
    Py_buffer b[9];
    if (get_buffers(objs, b, 8, 7) < 0) return NULL;
    if (PyObject_GetBuffer(objs[8], &b[8], PyBUF_C_CONTIGUOUS) < 0) {
        for (int j = 0; j < 8; j++) PyBuffer_Release(&b[j]);
        return NULL;
    }
    const void *run_off = b[0].buf;
    const char *run_data = (const char *)b[1].buf;
    const int64_t *seg_off = (const int64_t *)b[2].buf, *seg_to_grp = (const int64_t *)b[3].buf;
    const int64_t *grp_off = (const int64_t *)b[4].buf, *gold_off = (const int64_t *)b[5].buf;
    const char *gold_data = (const char *)b[6].buf;
    int64_t *out = (int64_t *)b[7].buf;
    Py_ssize_t nseg = b[3].len / 8, ngrp = b[4].len / 8 - 1, ngold = b[5].len / 8 - 1;
    Py_ssize_t nrun = b[0].len / width - 1, run_len = b[1].len, gold_len = b[6].len, nout = b[7].len / 8;
    long long matched = 0;
    int ok = b[2].len / 8 == nseg + 1 && ngrp >= 0 && ngold >= 0 && nrun >= 0 && row_base >= 0 &&
             seg_begin >= 0 && seg_end <= nseg && seg_begin <= seg_end;
    /* Every segment done must lie within this chunk of rows and within `out`, and the offsets must not
       decrease: all checked before anything is written (a later bad segment must not let an earlier
       one write out of bounds). */
    for (Py_ssize_t s = seg_begin; ok && s < seg_end; s++) {
        int64_t r0 = seg_off[s], r1 = seg_off[s + 1], g = seg_to_grp[s];
        if (r0 < row_base || r1 < r0 || r1 > row_base + nrun || r1 > nout) ok = 0;
        else if (g >= 0 && g < ngrp && (grp_off[g] < 0 || grp_off[g + 1] > ngold || grp_off[g + 1] < grp_off[g]))
            ok = 0;
    }
    /* first 8 bytes of every gold string (see prefixes8), so most rows are rejected without memcmp */
    const uint64_t *gold_prefix = (const uint64_t *)b[8].buf;
    if (b[8].len / 8 < ngold) ok = 0;
    for (Py_ssize_t k = 0; ok && k < ngold; k++) {
        int64_t ga = gold_off[k], glen = gold_off[k + 1] - gold_off[k];
        if (ga < 0 || glen < 0 || ga + glen > gold_len) ok = 0;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t s = seg_begin; ok && s < seg_end; s++) {
        int64_t g = seg_to_grp[s];
        int64_t r0 = seg_off[s], r1 = seg_off[s + 1];
        if (r0 < row_base || r1 < r0 || r1 > row_base + nrun) { ok = 0; break; }
        if (g < 0 || g >= ngrp) {
            for (int64_t r = r0; r < r1; r++) out[r] = -1;
            continue;
        }
        int64_t k0 = grp_off[g], k1 = grp_off[g + 1];
        if (k0 < 0 || k1 > ngold || k1 < k0) { ok = 0; break; }
        for (int64_t r = r0; r < r1; r++) {
            int64_t a = off_at(run_off, width, r - row_base), z = off_at(run_off, width, r - row_base + 1);
            int64_t len = z - a;
            if (a < 0 || len < 0 || z > run_len) { ok = 0; break; }
            uint64_t pre = prefix8(run_data + a, len);
            int64_t hit = -1;
            for (int64_t k = k0; k < k1; k++) {
                if (gold_prefix[k] != pre || gold_off[k + 1] - gold_off[k] != len) continue;
                if (len <= 8 || memcmp(run_data + a + 8, gold_data + gold_off[k] + 8, (size_t)(len - 8)) == 0) {
                    hit = k;
                    break;
                }
            }
            out[r] = hit;
            matched += hit >= 0;
        }
    }
    Py_END_ALLOW_THREADS
    for (int j = 0; j < 9; j++) PyBuffer_Release(&b[j]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "match_segments: inconsistent offsets or buffer sizes");
        return NULL;
    }
    return PyLong_FromLongLong(matched);
}

static PyObject *find_odd_whitespace(PyObject *self, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b)) return NULL;
    const unsigned char *p = (const unsigned char *)b.buf;
    Py_ssize_t n = b.len;
    volatile Py_ssize_t found = -1;
    int faulted;
    Py_BEGIN_ALLOW_THREADS
    /* Blocks of 4 KiB with a branch-free OR (vectorisable); the exact byte only once a block hits. */
    GUARDED_READ(faulted, {
        for (Py_ssize_t a = 0; a < n && found < 0; a += 4096) {
            Py_ssize_t z = a + 4096 < n ? a + 4096 : n;
            unsigned char hit = 0;
            for (Py_ssize_t i = a; i < z; i++) {
                unsigned char c = p[i];
                hit |= (unsigned char)((unsigned char)(c - 9) <= 4) & (unsigned char)(c != 10);
            }
            if (hit) {
                for (Py_ssize_t i = a; i < z; i++) {
                    unsigned char c = p[i];
                    if (c >= 9 && c <= 13 && c != 10) { found = i; break; }
                }
            }
        }
    });
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    if (faulted) return mapping_fault();
    return PyLong_FromSsize_t(found);
}

static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *dicts, *keysobj, *whichobj, *findobj, *idxobj;
    if (!PyArg_ParseTuple(args, "O!OOOO", &PyList_Type, &dicts, &keysobj, &whichobj, &findobj, &idxobj))
        return NULL;
    Py_buffer wb, kb, fb, ib;
    int have_keys = keysobj != Py_None;
    if (PyObject_GetBuffer(findobj, &fb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (fb.format == NULL || strcmp(fb.format, "O") != 0 || fb.itemsize != (Py_ssize_t)sizeof(PyObject *)) {
        PyBuffer_Release(&fb);
        PyErr_SetString(PyExc_TypeError, "scan: find must be an object array");
        return NULL;
    }
    if (PyObject_GetBuffer(idxobj, &ib, PyBUF_C_CONTIGUOUS) < 0) { PyBuffer_Release(&fb); return NULL; }
    if (PyObject_GetBuffer(whichobj, &wb, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&ib); PyBuffer_Release(&fb);
        return NULL;
    }
    PyObject *const *find = (PyObject *const *)fb.buf;
    const int64_t *find_idx = (const int64_t *)ib.buf;
    Py_ssize_t nfind = fb.len / (Py_ssize_t)sizeof(PyObject *);
    Py_ssize_t nd = PyList_GET_SIZE(dicts), m = ib.len / 8;
    int bad_idx = 0;
    for (Py_ssize_t j = 0; j < m; j++) if (find_idx[j] < 0 || find_idx[j] >= nfind) bad_idx = 1;
    const int64_t *which = (const int64_t *)wb.buf;
    /* the lookups of dict i are done right after it is scanned: `which` must be non-decreasing */
    for (Py_ssize_t j = 1; !bad_idx && j < m && wb.len / 8 >= m; j++) if (which[j] < which[j - 1]) bad_idx = 1;
    if (wb.len / 8 < m || bad_idx) {
        PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
        PyErr_SetString(PyExc_ValueError,
                        "scan: 'which' shorter than 'find_idx', not sorted, or an index out of range");
        return NULL;
    }
    long status = 0;
    Py_ssize_t n = 0;
    PyObject *counts = PyBytes_FromStringAndSize(NULL, nd * 8);
    if (counts == NULL) {
        PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
        return NULL;
    }
    int64_t *cnt = (int64_t *)PyBytes_AS_STRING(counts);
    for (Py_ssize_t i = 0; i < nd; i++) {  /* pass 1: types and sizes */
        PyObject *d = PyList_GET_ITEM(dicts, i);
        if (!PyDict_CheckExact(d)) { status = 1; cnt[i] = 0; continue; }
        cnt[i] = PyDict_GET_SIZE(d);
        n += PyDict_GET_SIZE(d);
    }
    /* keys: an object array, or a callable making one for the n keys (the caller need not count them);
       Python code run by the callable may change the list: pass 2 checks sizes again */
    PyObject *made = NULL;
    if (have_keys && PyCallable_Check(keysobj)) {
        made = PyObject_CallFunction(keysobj, "n", status ? (Py_ssize_t)0 : n);
        if (made == NULL) {
            Py_DECREF(counts);
            PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
            return NULL;
        }
        keysobj = made;
    }
    if (have_keys) {
        if (PyObject_GetBuffer(keysobj, &kb, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE | PyBUF_FORMAT) < 0) {
            Py_XDECREF(made); Py_DECREF(counts);
            PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
            return NULL;
        }
        if (kb.format == NULL || strcmp(kb.format, "O") != 0 || kb.itemsize != (Py_ssize_t)sizeof(PyObject *)) {
            PyBuffer_Release(&kb);
            Py_XDECREF(made); Py_DECREF(counts);
            PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
            PyErr_SetString(PyExc_TypeError, "scan: keys must be an object array");
            return NULL;
        }
    }
    if (!status && have_keys && kb.len / (Py_ssize_t)sizeof(PyObject *) < n) status = 5;  /* sizes changed */
    PyObject *values = PyByteArray_FromStringAndSize(NULL, status ? 0 : n * 8);
    PyObject *found = PyByteArray_FromStringAndSize(NULL, m * 8);
    if (values == NULL || found == NULL) {
        Py_XDECREF(values); Py_XDECREF(found); Py_DECREF(counts);
        if (have_keys) PyBuffer_Release(&kb);
        Py_XDECREF(made);
        PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
        return NULL;
    }
    double *fd = (double *)PyByteArray_AS_STRING(found);
    for (Py_ssize_t j = 0; j < m; j++) fd[j] = NAN;
    if (!status) {
        double *out = (double *)PyByteArray_AS_STRING(values);
        PyObject **keys = have_keys ? (PyObject **)kb.buf : NULL;
        Py_ssize_t pos = 0, j = 0;
        for (Py_ssize_t i = 0; i < nd && status == 0; i++) {  /* pass 2: values, keys, lookups */
            /* Python code run by a value's __float__ or a key's __eq__ may change the list: re-check its
               size, and hold a reference to the dict while it is used. */
            if (PyList_GET_SIZE(dicts) != nd) { status = 5; break; }
            PyObject *d = PyList_GET_ITEM(dicts, i);
            Py_INCREF(d);
            status = scan_one(d, out, &pos, n, keys);
            if (status) { Py_DECREF(d); break; }
            while (j < m && which[j] < i) j++;
            while (j < m && which[j] == i) {
                PyObject *key = find[find_idx[j]];
                Py_INCREF(key);
                PyObject *val = PyDict_GetItemWithError(d, key);
                Py_DECREF(key);
                if (val != NULL) {
                    Py_INCREF(val);
                    double x = PyFloat_CheckExact(val) ? PyFloat_AS_DOUBLE(val) : PyFloat_AsDouble(val);
                    Py_DECREF(val);
                    if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); x = NAN; }
                    fd[j] = x;
                } else if (PyErr_Occurred()) {
                    PyErr_Clear();
                }
                j++;
            }
            Py_DECREF(d);
        }
        if (status == 0 && pos != n) status = 5;  /* a dict changed size during the scan */
    }
    if (have_keys) PyBuffer_Release(&kb);
    PyBuffer_Release(&wb); PyBuffer_Release(&ib); PyBuffer_Release(&fb);
    if (made != NULL) return Py_BuildValue("(lNNNN)", status, counts, values, found, made);
    return Py_BuildValue("(lNNN)", status, counts, values, found);
}


/* -- TREC tokenizer ---------------------------------------------------------------------------- */

/* byte classes: 0 ordinary, 1 separator (a space or a tab), 2 newline, 3 anything the fast path leaves
   to the careful one, 4 non-ASCII */
static unsigned char byte_class[256];

static void init_byte_class(void) {
    for (int c = 0; c < 256; c++) byte_class[c] = c >= 0x80 ? 4 : (c < 0x20 && c != '\n') ? 3 : 0;
    byte_class[' '] = 1;
    byte_class['\t'] = 1;  /* one tab separates fields as one space does (the careful path reads it so) */
    byte_class['\n'] = 2;
}

/* Whether s[0..n) is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF):
   what pyarrow and Python's decoder accept. */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        int len;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
        else return 0;
        if (i + len > n) return 0;
        for (int j = 1; j < len; j++) {
            unsigned char t = s[i + j];
            if ((t & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (t & 0x3F);
        }
        if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
        if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
        i += len;
    }
    return 1;
}

static const double pow10_exact[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* [+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?  -> 1 and *out, else 0. Correctly rounded:
   Clinger's exact case (mantissa <= 2^53, |exponent| <= 22) inline, anything else through strtod. */
static int parse_decimal(const unsigned char *p, Py_ssize_t n, double *out) {
    const unsigned char *s = p, *e = p + n;
    int neg = 0, any = 0, inexact = 0;
    uint64_t m = 0;
    long exp10 = 0;
    if (s < e && (*s == '+' || *s == '-')) { neg = *s == '-'; s++; }
    for (; s < e && (unsigned)(*s - '0') < 10; s++) {
        any = 1;
        if (m < 100000000000000000ULL) m = m * 10 + (uint64_t)(*s - '0');
        else { exp10++; inexact = 1; }
    }
    if (s < e && *s == '.') {
        for (s++; s < e && (unsigned)(*s - '0') < 10; s++) {
            any = 1;
            if (m < 100000000000000000ULL) { m = m * 10 + (uint64_t)(*s - '0'); exp10--; }
            else inexact = 1;
        }
    }
    if (!any) return 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        int eneg = 0;
        long ev = 0;
        s++;
        if (s < e && (*s == '+' || *s == '-')) { eneg = *s == '-'; s++; }
        if (s >= e || (unsigned)(*s - '0') >= 10) return 0;
        for (; s < e && (unsigned)(*s - '0') < 10; s++) if (ev < 100000) ev = ev * 10 + (*s - '0');
        exp10 += eneg ? -ev : ev;
    }
    if (s != e) return 0;
    if (!inexact && m <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        double x = (double)m;
        x = exp10 < 0 ? x / pow10_exact[-exp10] : x * pow10_exact[exp10];
        *out = neg ? -x : x;
        return 1;
    }
    char tmp[128];
    if (n >= (Py_ssize_t)sizeof tmp) return 0;
    memcpy(tmp, p, (size_t)n);
    tmp[n] = 0;
    char *endp;
    double x = strtod(tmp, &endp);
    if (endp != tmp + n) return 0;
    *out = x;
    return 1;
}

/* The classes of bytes p[0..n) (n <= 64) as bit masks, as classify64 (the scalar way). */
static inline void classify_tail(const unsigned char *p, Py_ssize_t n, uint64_t *delim, uint64_t *nl, uint64_t *bad,
                                 uint64_t *high) {
    uint64_t d = 0, l = 0, b = 0, h = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char k = byte_class[p[i]];
        d |= (uint64_t)(k == 1 || k == 2) << i;
        l |= (uint64_t)(k == 2) << i;
        b |= (uint64_t)(k == 3) << i;
        h |= (uint64_t)(k == 4) << i;
    }
    *delim = d; *nl = l; *bad = b; *high = h;
}

/* Bit i of *delim: byte i is a space, tab or newline; of *nl: a newline; of *bad: any other control byte;
   of *high: a non-ASCII byte (part of a UTF-8 sequence, checked where it matters). For the 64 bytes at
   p. */
static inline void classify64(const unsigned char *p, uint64_t *delim, uint64_t *nl, uint64_t *bad,
                              uint64_t *high) {
#if defined(HAVE_SSE2)
    const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), lf = _mm_set1_epi8('\n'),
                  lo = _mm_set1_epi8(0x20);
    uint64_t d = 0, n = 0, b = 0, h = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
        uint64_t ms = (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, tab)));
        uint64_t mn = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, lf));
        uint64_t mh = (uint32_t)_mm_movemask_epi8(v);  /* the top bit: bytes >= 0x80 */
        /* signed compare: below 0x20 holds the controls and every byte >= 0x80 */
        uint64_t mb = (uint32_t)_mm_movemask_epi8(_mm_cmplt_epi8(v, lo));
        d |= (ms | mn) << (16 * i);
        n |= mn << (16 * i);
        b |= (mb & ~mn & ~mh & ~ms) << (16 * i);
        h |= mh << (16 * i);
    }
    *delim = d; *nl = n; *bad = b; *high = h;
#else
    classify_tail(p, 64, delim, nl, bad, high);
#endif
}

#define TREC_MAX_COLS 8
#define RELEASE_STEP ((Py_ssize_t)16 << 20)

static void release_pages(const unsigned char *base, Py_ssize_t from, Py_ssize_t to) {
#if (defined(__unix__) || defined(__APPLE__)) && defined(MADV_DONTNEED)
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t a = ((uintptr_t)(base + from) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t z = (uintptr_t)(base + to) & ~((uintptr_t)page - 1);
    if (z > a) madvise((void *)a, z - a, MADV_DONTNEED);
#else
    (void)base; (void)from; (void)to;
#endif
}

static PyObject *scan_trec(PyObject *self, PyObject *args) {
    PyObject *objs[8];
    Py_ssize_t begin, end;
    int ncols, numcol, doccol, release;
    if (!PyArg_ParseTuple(args, "OnniiipOOOOOOO", &objs[0], &begin, &end, &ncols, &numcol, &doccol, &release,
                          &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &objs[6], &objs[7]))
        return NULL;
    if (ncols < 2 || ncols > TREC_MAX_COLS || numcol <= 0 || numcol >= ncols || doccol <= 0 || doccol >= ncols ||
        numcol == doccol) {
        PyErr_SetString(PyExc_ValueError, "scan_trec: bad column layout");
        return NULL;
    }
    Py_buffer b[8];
    if (get_buffers(objs, b, 8, 1) < 0) return NULL;
    const unsigned char *buf = (const unsigned char *)b[0].buf;
    double *vals = (double *)b[1].buf;
    int64_t *doc_off = (int64_t *)b[2].buf, *seg_row = (int64_t *)b[4].buf, *q_off = (int64_t *)b[5].buf;
    unsigned char *doc_data = (unsigned char *)b[3].buf, *q_data = (unsigned char *)b[6].buf;
    int64_t *state = (int64_t *)b[7].buf;
    Py_ssize_t cap_rows = b[1].len / 8, cap_doc_off = b[2].len / 8, cap_doc = b[3].len;
    Py_ssize_t cap_seg = b[4].len / 8, cap_q_off = b[5].len / 8, cap_q = b[6].len;
    int state_ok = b[7].len / 8 >= 8 && begin >= 0 && end <= b[0].len && begin <= end;
    if (state_ok) {  /* the positions a previous call left: within the outputs and the buffer */
        const int64_t *st = (const int64_t *)b[7].buf;
        state_ok = st[0] >= 0 && st[0] <= cap_rows && st[0] < cap_doc_off && st[1] >= 0 && st[1] <= cap_doc &&
                   st[2] >= 0 && st[2] <= cap_seg && st[2] < cap_q_off && st[3] >= 0 && st[3] <= cap_q &&
                   st[5] >= 0 && (st[4] == -1 || (st[4] >= 0 && st[4] + st[5] <= b[0].len));
    }
    /* pages are dropped (madvise) only from the module's own read-only file mapping, never from a
       buffer someone else owns */
    if (state_ok && release && !is_filemap(objs[0])) {
        for (int j = 0; j < 8; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "scan_trec: release=True needs a FileMap buffer");
        return NULL;
    }
    if (!state_ok) {
        for (int j = 0; j < 8; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "scan_trec: bad range or state");
        return NULL;
    }
    int64_t row = state[0], dpos = state[1], nseg = state[2], qpos = state[3];
    int64_t prev_start = state[4], prev_len = state[5];
    int64_t status = 0, err = -1;
    int faulted;
    Py_BEGIN_ALLOW_THREADS
    GUARDED_READ(faulted, {
        const unsigned char *tok[TREC_MAX_COLS];
        Py_ssize_t len[TREC_MAX_COLS];
        Py_ssize_t released = begin, pos = begin, tok_start = begin, line_start = begin, last_high = -1;
        int nf = 0;
        /* Delimiters (space, newline) and stray bytes are found 64 bytes at a time as bit masks (SSE2 where
           available); each delimiter then closes a field, and each newline a line. */
        while (pos < end || nf > 0 || tok_start < end) {
            uint64_t delim, nl, bad, high;
            Py_ssize_t span = end - pos;
            if (span >= 64) {
                classify64(buf + pos, &delim, &nl, &bad, &high);
                span = 64;
            } else if (span > 0) {
                classify_tail(buf + pos, span, &delim, &nl, &bad, &high);
            } else {  /* the last line has no newline: end it here */
                delim = nl = 1;
                bad = high = 0;
                span = 1;
            }
            if (bad) { status = 1; err = pos + (Py_ssize_t)ctz64(bad); break; }
            if (high) last_high = pos + 63 - (Py_ssize_t)clz64(high);
            while (delim) {
                Py_ssize_t d = pos + (Py_ssize_t)ctz64(delim);
                int is_nl = (int)((nl >> (d - pos)) & 1);
                delim &= delim - 1;
                if (is_nl && nf == 0 && d == tok_start) {  /* an empty line */
                    tok_start = line_start = d + 1;
                    continue;
                }
                if (d == tok_start || nf == ncols) { status = 1; err = line_start; break; }
                tok[nf] = buf + tok_start;
                len[nf] = d - tok_start;
                nf++;
                tok_start = d + 1;
                if (!is_nl) continue;
                /* a whole line */
                double x;
                /* (the grammar has no NaN: no check on x, whose division then overlaps the next line) */
                /* a comment line (first byte '#', as trec_eval reads it): the careful path drops it */
                if (nf != ncols || tok[0][0] == '#' || !parse_decimal(tok[numcol], len[numcol], &x)) {
                    status = 1; err = line_start; break;
                }
                Py_ssize_t ql = len[0], dl = len[doccol];
                /* a non-ASCII byte on this line (or later in its block): the ids must be valid UTF-8 */
                if (last_high >= line_start && (!utf8_valid(tok[0], ql) || !utf8_valid(tok[doccol], dl))) {
                    status = 1; err = line_start; break;
                }
                int same = prev_start >= 0 && prev_len == ql && memcmp(buf + prev_start, tok[0], (size_t)ql) == 0;
                if (row >= cap_rows || row + 1 >= cap_doc_off || dpos + dl > cap_doc ||
                    (!same && (nseg >= cap_seg || nseg + 1 >= cap_q_off || qpos + ql > cap_q))) {
                    status = 2; err = line_start; break;
                }
                if (!same) {
                    seg_row[nseg] = row;
                    q_off[nseg] = qpos;
                    memcpy(q_data + qpos, tok[0], (size_t)ql);
                    qpos += ql;
                    nseg++;
                    prev_start = tok[0] - buf;
                    prev_len = ql;
                }
                doc_off[row] = dpos;
                memcpy(doc_data + dpos, tok[doccol], (size_t)dl);
                dpos += dl;
                vals[row] = x;
                row++;
                nf = 0;
                line_start = d + 1;
            }
            if (status) break;
            pos += span;
            if (pos > end) pos = end;  /* past the virtual newline of a last line */
            if (release && line_start - released >= RELEASE_STEP) {
                /* keep the previous query id's bytes mapped: they are compared with the next line */
                Py_ssize_t upto = prev_start < line_start ? prev_start : line_start;
                if (upto > released) { release_pages(buf, released, upto); released = upto; }
            }
        }
        if (row < cap_doc_off) doc_off[row] = dpos;
        if (nseg < cap_q_off) q_off[nseg] = qpos;
    });
    Py_END_ALLOW_THREADS
    if (faulted) {  /* the file shrank under the mapping: what was scanned is lost (status 3) */
        state[6] = 3; state[7] = -1;
    } else {
        state[0] = row; state[1] = dpos; state[2] = nseg; state[3] = qpos;
        state[4] = prev_start; state[5] = prev_len; state[6] = status; state[7] = err;
    }
    for (int j = 0; j < 8; j++) PyBuffer_Release(&b[j]);
    Py_RETURN_NONE;
}

static uint64_t fnv1a(const unsigned char *p, int64_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (int64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static PyObject *first_duplicate_in_segments(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "OOO", &objs[0], &objs[1], &objs[2])) return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, b, 3, 3) < 0) return NULL;
    const int64_t *off = (const int64_t *)b[0].buf, *seg = (const int64_t *)b[2].buf;
    const unsigned char *data = (const unsigned char *)b[1].buf;
    Py_ssize_t nrows = b[0].len / 8 - 1, nseg = b[2].len / 8 - 1, dlen = b[1].len;
    int ok = nrows >= 0 && nseg >= 0 && (nseg == 0 || (seg[0] >= 0 && seg[nseg] <= nrows));
    int64_t largest = 0;
    for (Py_ssize_t s = 0; ok && s < nseg; s++) {
        if (seg[s + 1] < seg[s]) ok = 0;
        else if (seg[s + 1] - seg[s] > largest) largest = seg[s + 1] - seg[s];
    }
    for (Py_ssize_t r = 0; ok && r < nrows; r++)
        if (off[r] < 0 || off[r + 1] < off[r] || off[r + 1] > dlen) ok = 0;
    if (!ok) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "first_duplicate_in_segments: inconsistent offsets");
        return NULL;
    }
    size_t size = 8;
    while (size < (size_t)largest * 2) size <<= 1;
    int64_t *table = (int64_t *)PyMem_RawMalloc(size * sizeof(int64_t));
    if (table == NULL) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        return PyErr_NoMemory();
    }
    int64_t found = -1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t s = 0; s < nseg && found < 0; s++) {
        int64_t r0 = seg[s], r1 = seg[s + 1], k = r1 - r0;
        if (k < 2) continue;
        size_t m = 8;
        while (m < (size_t)k * 2) m <<= 1;
        for (size_t i = 0; i < m; i++) table[i] = -1;
        for (int64_t r = r0; r < r1 && found < 0; r++) {
            const unsigned char *p = data + off[r];
            int64_t n = off[r + 1] - off[r];
            size_t i = (size_t)fnv1a(p, n) & (m - 1);
            while (table[i] >= 0) {
                int64_t o = table[i];
                if (off[o + 1] - off[o] == n && memcmp(data + off[o], p, (size_t)n) == 0) { found = r; break; }
                i = (i + 1) & (m - 1);
            }
            if (found < 0) table[i] = r;
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(table);
    for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
    return PyLong_FromLongLong(found);
}

/* Stable sort of idx[0..n) by descending v[idx[.]]; tmp has room for n. */
static void sort_desc_stable(const double *v, int64_t *idx, int64_t *tmp, int64_t n) {
    const int64_t run = 16;
    for (int64_t a = 0; a < n; a += run) {  /* insertion sort of short runs */
        int64_t z = a + run < n ? a + run : n;
        for (int64_t i = a + 1; i < z; i++) {
            int64_t x = idx[i];
            double key = v[x];
            int64_t j = i;
            while (j > a && v[idx[j - 1]] < key) { idx[j] = idx[j - 1]; j--; }
            idx[j] = x;
        }
    }
    int64_t *src = idx, *dst = tmp;
    for (int64_t width = run; width < n; width *= 2) {  /* bottom-up merges; ties take the left side */
        for (int64_t a = 0; a < n; a += 2 * width) {
            int64_t m = a + width < n ? a + width : n, z = a + 2 * width < n ? a + 2 * width : n;
            int64_t i = a, j = m, k = a;
            while (i < m && j < z) dst[k++] = (v[src[j]] > v[src[i]]) ? src[j++] : src[i++];
            while (i < m) dst[k++] = src[i++];
            while (j < z) dst[k++] = src[j++];
        }
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof(int64_t));
}

static PyObject *sort_segments_desc(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    long long seg_begin, seg_end;
    if (!PyArg_ParseTuple(args, "OOOLL", &objs[0], &objs[1], &objs[2], &seg_begin, &seg_end)) return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, b, 3, 2) < 0) return NULL;
    const double *v = (const double *)b[0].buf;
    const int64_t *off = (const int64_t *)b[1].buf;
    int64_t *out = (int64_t *)b[2].buf;
    Py_ssize_t n = b[0].len / 8, nseg = b[1].len / 8 - 1;
    int ok = nseg >= 0 && seg_begin >= 0 && seg_end <= nseg && seg_begin <= seg_end && b[2].len / 8 >= n;
    int64_t longest = 0;
    for (Py_ssize_t s = seg_begin; ok && s < seg_end; s++) {
        if (off[s] < 0 || off[s + 1] < off[s] || off[s + 1] > n) ok = 0;
        else if (off[s + 1] - off[s] > longest) longest = off[s + 1] - off[s];
    }
    int64_t *tmp = ok ? (int64_t *)PyMem_RawMalloc((size_t)(longest > 0 ? longest : 1) * sizeof(int64_t)) : NULL;
    if (ok && tmp == NULL) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        return PyErr_NoMemory();
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t s = seg_begin; s < seg_end; s++) {
            int64_t a = off[s], len = off[s + 1] - off[s];
            for (int64_t i = 0; i < len; i++) out[a + i] = a + i;
            sort_desc_stable(v, out + a, tmp, len);
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(tmp);
    for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "sort_segments_desc: inconsistent offsets or buffer sizes");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- fusion (fusion speed work): numba's default np.argsort (quicksort) within segments, for ranx's
 * tie order, and the layout of several runs over one (query, document) pair space -------------------
 * The sort is numba's quicksort (median-of-three partition, insertion sort below 15 items, the larger
 * part pushed on a stack), written from its description so that the permutation of equal keys is the
 * one numba produces from the same input order. Ascending in the keys. Each item carries its key with
 * its index (the comparisons are those of numba's A[R[i]], without the indirect loads). A segment whose
 * keys already rise strictly is left as it is (every sort returns that order). */
#define NQS_SMALL 15
typedef struct { double k; int64_t i; } nqs_item;
/* numba's insertion sort of R[low..high] (at most NQS_SMALL items) is stable, so its result is the
 * stable order, computed here by counting for each item the items that go before it (no branch on the
 * data). */
static void nqs_insertion(nqs_item *R, int64_t low, int64_t high) {
    int64_t m = high - low + 1;
    if (m < 2) return;
    nqs_item tmp[NQS_SMALL + 1];
    double key[NQS_SMALL + 1];
    for (int64_t i = 0; i < m; i++) { tmp[i] = R[low + i]; key[i] = tmp[i].k; }
    for (int64_t i = 0; i < m; i++) {
        double v = key[i];
        int64_t r = 0;
        for (int64_t j = 0; j < i; j++) r += key[j] <= v;
        for (int64_t j = i + 1; j < m; j++) r += key[j] < v;
        R[low + r] = tmp[i];
    }
}
/* numba's partition, computed without its data-dependent branches: its rising scan stops at the items
 * not below the pivot, its falling scan at the items not above it, and the t-th stops of the two scans
 * are swapped for as long as they have not crossed (items between the two scans are untouched by
 * earlier swaps). The stops are collected branch-free in L and G (scratch of n items each). */
static int64_t nqs_partition(nqs_item *R, int64_t low, int64_t high, int64_t *L, int64_t *G) {
    int64_t mid = (low + high) >> 1;
    nqs_item t;
    if (R[mid].k < R[low].k) { t = R[low]; R[low] = R[mid]; R[mid] = t; }
    if (R[high].k < R[mid].k) { t = R[high]; R[high] = R[mid]; R[mid] = t; }
    if (R[mid].k < R[low].k) { t = R[low]; R[low] = R[mid]; R[mid] = t; }
    double pivot = R[mid].k;
    t = R[high]; R[high] = R[mid]; R[mid] = t;
    /* one pass: L rising (the rising scan's stops in order), G rising too (the falling scan's stops are
     * G read backwards: its t-th stop is G[ng - 1 - t]) */
    int64_t nl = 0, ng = 0;
    for (int64_t x = low; x < high; x++) {
        double k = R[x].k;
        L[nl] = x; nl += !(k < pivot);
        G[ng] = x; ng += !(pivot < k);
    }
    int64_t n = nl < ng ? nl : ng, r = 0;
    while (r < n && L[r] < G[ng - 1 - r]) r++;
    for (int64_t s = 0; s < r; s++) { int64_t g = G[ng - 1 - s]; t = R[L[s]]; R[L[s]] = R[g]; R[g] = t; }
    int64_t stop = r < nl ? L[r] : high;
    if (r > 0 && G[ng - r] < stop) stop = G[ng - r];
    t = R[stop]; R[stop] = R[high]; R[high] = t;
    return stop;
}
static void nqs_sort(nqs_item *R, int64_t n, int64_t *L, int64_t *G) {
    if (n < 2) return;
    int64_t stack_lo[128], stack_hi[128];
    int sp = 1;
    stack_lo[0] = 0; stack_hi[0] = n - 1;
    while (sp > 0) {
        sp--;
        int64_t low = stack_lo[sp], high = stack_hi[sp];
        while (high - low >= NQS_SMALL) {
            int64_t i = nqs_partition(R, low, high, L, G);
            /* the smaller part is sorted next, so the stack never holds more than log2(n) ranges */
            if (high - i > i - low) {
                if (high > i && sp < 128) { stack_lo[sp] = i + 1; stack_hi[sp] = high; sp++; }
                high = i - 1;
            } else {
                if (i > low && sp < 128) { stack_lo[sp] = low; stack_hi[sp] = i - 1; sp++; }
                low = i + 1;
            }
        }
        nqs_insertion(R, low, high);
    }
}

/* numba_argsort_segments(keys, offsets, out[, sorted_keys, negate]) -> None
 *     out[a:b] = a + numba's argsort of keys[a:b] for every segment (offsets int64, non-decreasing,
 *     within keys). negate: sort -keys (ranx sorts descending scores this way). sorted_keys (float64,
 *     or None): receives the keys in that order (negated back when negate is set). */
static PyObject *numba_argsort_segments(PyObject *self, PyObject *args) {
    PyObject *objs[4] = {NULL, NULL, NULL, Py_None};
    int negate = 0;
    if (!PyArg_ParseTuple(args, "OOO|Op", &objs[0], &objs[1], &objs[2], &objs[3], &negate)) return NULL;
    int nb = objs[3] == Py_None ? 3 : 4;
    Py_buffer b[4];
    if (get_buffers(objs, b, nb, 2) < 0) return NULL;
    const double *v = (const double *)b[0].buf;
    const int64_t *off = (const int64_t *)b[1].buf;
    int64_t *out = (int64_t *)b[2].buf;
    double *sk = nb == 4 ? (double *)b[3].buf : NULL;
    Py_ssize_t n = b[0].len / 8, nseg = b[1].len / 8 - 1;
    int ok = nseg >= 0 && b[2].len / 8 >= n && (sk == NULL || b[3].len / 8 >= n);
    int64_t longest = 0;
    for (Py_ssize_t s = 0; ok && s < nseg; s++) {
        if (off[s] < 0 || off[s + 1] < off[s] || off[s + 1] > n) ok = 0;
        else if (off[s + 1] - off[s] > longest) longest = off[s + 1] - off[s];
    }
    size_t cap = (size_t)(longest > 0 ? longest : 1);
    nqs_item *R = ok ? (nqs_item *)PyMem_RawMalloc(cap * (sizeof(nqs_item) + 2 * sizeof(int64_t))) : NULL;
    if (ok && R == NULL) {
        for (int j = 0; j < nb; j++) PyBuffer_Release(&b[j]);
        return PyErr_NoMemory();
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        double sign = negate ? -1.0 : 1.0;
        for (Py_ssize_t s = 0; s < nseg; s++) {
            int64_t a = off[s], len = off[s + 1] - off[s];
            int rising = 1;
            for (int64_t i = 0; i < len; i++) {
                R[i].k = sign * v[a + i];
                R[i].i = i;
                if (i > 0 && !(R[i - 1].k < R[i].k)) rising = 0;
            }
            if (!rising) nqs_sort(R, len, (int64_t *)(R + cap), (int64_t *)(R + cap) + cap);
            for (int64_t i = 0; i < len; i++) out[a + i] = a + R[i].i;
            if (sk != NULL)
                for (int64_t i = 0; i < len; i++) sk[a + i] = sign * R[i].k;
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(R);
    for (int j = 0; j < nb; j++) PyBuffer_Release(&b[j]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "numba_argsort_segments: inconsistent offsets or buffer sizes");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* (ragrade.compat.pytrec_eval's fast path lives in ragrade/compat/_speedups.c) */

/* kahan_cumsum_runs(q, w, out) -> status
 *     q int64, w and out float64, C-contiguous, of one length n (ValueError otherwise): out[i] the compensated
 *     running sum of w within i's run of equal consecutive q values, the additions pandas' grouped cumsum makes
 *     (y = w - c; t = s + y; c = (t - s) - y; s = t; from s = c = 0 at each run's start), so the same floats.
 *     Status 0; 1 when a weight is not finite (out then holds nothing useful: the caller takes another way). */
static PyObject *kahan_cumsum_runs(PyObject *self, PyObject *args) {
    PyObject *objs[3];
    if (!PyArg_ParseTuple(args, "OOO", &objs[0], &objs[1], &objs[2])) return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, b, 3, 2) < 0) return NULL;
    Py_ssize_t n = b[0].len / 8;
    long status = 0;
    if (b[0].len % 8 != 0 || b[1].len != b[0].len || b[2].len != b[0].len) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "kahan_cumsum_runs: q, w and out must hold n int64 / float64 each");
        return NULL;
    }
    const int64_t *q = (const int64_t *)b[0].buf;
    const double *w = (const double *)b[1].buf;
    double *out = (double *)b[2].buf;
    double acc = 0.0, comp = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i == 0 || q[i] != q[i - 1]) { acc = 0.0; comp = 0.0; }
        double x = w[i];
        if (!isfinite(x)) { status = 1; break; }
        double y = x - comp;
        double t = acc + y;
        comp = (t - acc) - y;
        acc = t;
        out[i] = t;
    }
    for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
    return PyLong_FromLong(status);
}
/* ==== pyspeed (end) ================================================================================ */


/* Buffers of a tuple of arrays (all int64, read-only or writable). Returns the count, or -1 (error set). */
static int fu_tuple_buffers(PyObject *tup, Py_buffer **out, int writable, const char *what) {
    if (!PyTuple_Check(tup)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a tuple of arrays", what);
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n > 4096) {
        PyErr_Format(PyExc_ValueError, "%s: too many runs", what);
        return -1;
    }
    Py_buffer *b = (Py_buffer *)PyMem_Malloc(sizeof(Py_buffer) * (size_t)(n > 0 ? n : 1));
    if (b == NULL) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(tup, i), &b[i], flags) < 0) {
            for (Py_ssize_t j = 0; j < i; j++) PyBuffer_Release(&b[j]);
            PyMem_Free(b);
            return -1;
        }
    }
    *out = b;
    return (int)n;
}
static void fu_release(Py_buffer *b, int n) {
    if (b == NULL) return;
    for (int i = 0; i < n; i++) PyBuffer_Release(&b[i]);
    PyMem_Free(b);
}
/* every offsets array: n_seg + 1 non-decreasing entries from >= 0 up to at most its rows' length */
static int fu_offsets_ok(Py_buffer *offs, Py_buffer *rows, int nr, Py_ssize_t *n_seg) {
    Py_ssize_t ns = nr > 0 ? offs[0].len / 8 - 1 : 0;
    if (ns < 0) return 0;
    for (int r = 0; r < nr; r++) {
        const int64_t *o = (const int64_t *)offs[r].buf;
        Py_ssize_t len = rows[r].len / 8;
        if (offs[r].len / 8 - 1 != ns || o[0] < 0) return 0;
        for (Py_ssize_t s = 0; s < ns; s++)
            if (o[s + 1] < o[s]) return 0;
        if (o[ns] > len) return 0;
    }
    *n_seg = ns;
    return 1;
}

/* fusion_pairs(docs, offsets, n_docs, row_pair, pair_doc, pair_off) -> number of pairs
 *     docs: tuple of int64 arrays (one per run: document codes < n_docs, rows grouped by query),
 *     offsets: tuple of int64 arrays (n_queries + 1 each: run r's rows of query q are
 *     docs[r][offsets[r][q]:offsets[r][q+1]]). Numbers the (query, document) pairs in first-seen order
 *     (query by query: run 0's rows, then run 1's, ...): row_pair[r][i] = the pair of run r's row i
 *     (rows outside every query are left as they are), pair_doc[p] its document (length >= the total of
 *     rows), pair_off[q] the first pair of query q (n_queries + 1 entries). */
static PyObject *fusion_pairs(PyObject *self, PyObject *args) {
    PyObject *docs_t, *offs_t, *rp_t, *objs[2];
    Py_ssize_t n_docs;
    if (!PyArg_ParseTuple(args, "OOnOOO", &docs_t, &offs_t, &n_docs, &rp_t, &objs[0], &objs[1])) return NULL;
    Py_buffer *docs = NULL, *offs = NULL, *rp = NULL, b[2];
    int nd = fu_tuple_buffers(docs_t, &docs, 0, "fusion_pairs");
    if (nd < 0) return NULL;
    int no = fu_tuple_buffers(offs_t, &offs, 0, "fusion_pairs");
    if (no < 0) { fu_release(docs, nd); return NULL; }
    int nr = fu_tuple_buffers(rp_t, &rp, 1, "fusion_pairs");
    if (nr < 0) { fu_release(docs, nd); fu_release(offs, no); return NULL; }
    if (get_buffers(objs, b, 2, 0) < 0) { fu_release(docs, nd); fu_release(offs, no); fu_release(rp, nr); return NULL; }
    int64_t *pair_doc = (int64_t *)b[0].buf, *pair_off = (int64_t *)b[1].buf;
    Py_ssize_t ns = 0, total = 0;
    int ok = nd == no && nd == nr && n_docs >= 0 && fu_offsets_ok(offs, docs, nd, &ns);
    for (int r = 0; ok && r < nd; r++) {
        if (rp[r].len < docs[r].len) ok = 0;
        total += docs[r].len / 8;
    }
    ok = ok && b[0].len / 8 >= total && b[1].len / 8 >= ns + 1;
    int64_t *stamp = ok ? (int64_t *)PyMem_RawMalloc(sizeof(int64_t) * 2 * (size_t)(n_docs > 0 ? n_docs : 1)) : NULL;
    int64_t np_ = 0;
    int bad_doc = 0;
    if (ok && stamp == NULL) ok = -1;
    if (ok == 1) {
        int64_t *slot = stamp + (n_docs > 0 ? n_docs : 1);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t d = 0; d < n_docs; d++) stamp[d] = -1;
        pair_off[0] = 0;
        for (Py_ssize_t q = 0; q < ns && !bad_doc; q++) {
            for (int r = 0; r < nd && !bad_doc; r++) {
                const int64_t *o = (const int64_t *)offs[r].buf, *dc = (const int64_t *)docs[r].buf;
                int64_t *out = (int64_t *)rp[r].buf;
                for (int64_t i = o[q]; i < o[q + 1]; i++) {
                    int64_t d = dc[i];
                    if (d < 0 || d >= n_docs) { bad_doc = 1; break; }
                    if (stamp[d] != q) { stamp[d] = q; slot[d] = np_; pair_doc[np_++] = d; }
                    out[i] = slot[d];
                }
            }
            pair_off[q + 1] = np_;
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(stamp);
    fu_release(docs, nd); fu_release(offs, no); fu_release(rp, nr);
    for (int j = 0; j < 2; j++) PyBuffer_Release(&b[j]);
    if (ok < 0) return PyErr_NoMemory();
    if (!ok || bad_doc) {
        PyErr_SetString(PyExc_ValueError, bad_doc ? "fusion_pairs: a document code out of range"
                                                  : "fusion_pairs: inconsistent offsets or buffer sizes");
        return NULL;
    }
    return PyLong_FromLongLong((long long)np_);
}

/* fusion_layout(pairs, offsets, n_pairs, u_pair, u_off, at, pos) -> number of fused rows U (at or pos None:
 *     not written)
 *     pairs/offsets as docs/offsets above (pair ids < n_pairs). The fused rows of each query are its pairs
 *     in first-seen order over the runs (run 0's list, then what run 1 adds, ...): u_pair[u] (length >=
 *     min(total rows, n_pairs)), u_off (n_queries + 1). at and pos: int64 [runs x cap] (C order, cap = their
 *     length / runs >= U): at[r, u] = run r's row holding u's pair (its last such row), or -1; pos[r, u] =
 *     that row's place in its query's list, or -1. Columns past U are not written. */
static PyObject *fusion_layout(PyObject *self, PyObject *args) {
    PyObject *pairs_t, *offs_t, *objs[4];
    Py_ssize_t n_pairs;
    if (!PyArg_ParseTuple(args, "OOnOOOO", &pairs_t, &offs_t, &n_pairs, &objs[0], &objs[1], &objs[2], &objs[3]))
        return NULL;
    Py_buffer *pairs = NULL, *offs = NULL, b[4];
    int np_r = fu_tuple_buffers(pairs_t, &pairs, 0, "fusion_layout");
    if (np_r < 0) return NULL;
    int no = fu_tuple_buffers(offs_t, &offs, 0, "fusion_layout");
    if (no < 0) { fu_release(pairs, np_r); return NULL; }
    /* at or pos may be None (not both): that output is not written */
    int has_at = objs[2] != Py_None, has_pos = objs[3] != Py_None;
    if (!has_at && !has_pos) {
        fu_release(pairs, np_r); fu_release(offs, no);
        PyErr_SetString(PyExc_ValueError, "fusion_layout: at and pos cannot both be None");
        return NULL;
    }
    PyObject *given[4] = {objs[0], objs[1], has_at ? objs[2] : objs[3], has_pos ? objs[3] : objs[2]};
    if (get_buffers(given, b, 4, 0) < 0) { fu_release(pairs, np_r); fu_release(offs, no); return NULL; }
    int64_t *u_pair = (int64_t *)b[0].buf, *u_off = (int64_t *)b[1].buf;
    int64_t *at = has_at ? (int64_t *)b[2].buf : NULL, *pos = has_pos ? (int64_t *)b[3].buf : NULL;
    int nr = np_r;
    Py_ssize_t ns = 0, total = 0;
    int ok = np_r == no && nr > 0 && n_pairs >= 0 && fu_offsets_ok(offs, pairs, nr, &ns);
    for (int r = 0; ok && r < nr; r++) total += pairs[r].len / 8;
    Py_ssize_t cap = ok ? b[2].len / 8 / nr : 0;
    Py_ssize_t need = total < n_pairs ? total : n_pairs;
    ok = ok && b[0].len / 8 >= need && b[1].len / 8 >= ns + 1 && cap >= need && b[3].len / 8 / nr >= cap;
    int64_t *slot = ok ? (int64_t *)PyMem_RawMalloc(sizeof(int64_t) * (size_t)(n_pairs > 0 ? n_pairs : 1)) : NULL;
    int64_t nu = 0;
    int bad = 0;
    if (ok && slot == NULL) ok = -1;
    if (ok == 1) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t p = 0; p < n_pairs; p++) slot[p] = -1;
        u_off[0] = 0;
        for (Py_ssize_t q = 0; q < ns && !bad; q++) {
            for (int r = 0; r < nr && !bad; r++) {
                const int64_t *o = (const int64_t *)offs[r].buf, *pc = (const int64_t *)pairs[r].buf;
                for (int64_t i = o[q]; i < o[q + 1]; i++) {
                    int64_t p = pc[i];
                    if (p < 0 || p >= n_pairs) { bad = 1; break; }
                    int64_t u = slot[p];
                    if (u < 0) {
                        if (nu >= cap) { bad = 1; break; }
                        u = slot[p] = nu++;
                        u_pair[u] = p;
                        if (at != NULL) for (int r2 = 0; r2 < nr; r2++) at[r2 * cap + u] = -1;
                        if (pos != NULL) for (int r2 = 0; r2 < nr; r2++) pos[r2 * cap + u] = -1;
                    }
                    if (at != NULL) at[r * cap + u] = i;
                    if (pos != NULL) pos[r * cap + u] = i - o[q];
                }
            }
            u_off[q + 1] = nu;
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(slot);
    fu_release(pairs, np_r); fu_release(offs, no);
    for (int j = 0; j < 4; j++) PyBuffer_Release(&b[j]);
    if (ok < 0) return PyErr_NoMemory();
    if (!ok || bad) {
        PyErr_SetString(PyExc_ValueError, bad ? "fusion_layout: a pair id out of range"
                                              : "fusion_layout: inconsistent offsets or buffer sizes");
        return NULL;
    }
    return PyLong_FromLongLong((long long)nu);
}
/* ---- end of the fusion block ---------------------------------------------------------------------- */

/* ==== spans (spansfast): the lengths of the span measures, one pass per query ========================
 * span_lengths(k, seg_lo, seg_hi, row_iv, iv_start, iv_end, gold_lo, gold_hi, gold_start, gold_end, out[, with_union])
 *     -> status
 *     Every argument is a 1-D C-contiguous int64 array (row_iv: int64 or int32; ValueError otherwise). n = len(k)
 *     queries. Query q
 *     reads the rows seg_lo[q] .. seg_hi[q]-1 of row_iv in order, skips those holding -1 and takes the first
 *     k[q] others: each is an interval [iv_start[i], iv_end[i]) (i = row_iv[row]); C is their union. Its gold
 *     spans are [gold_start[j], gold_end[j]) for j = gold_lo[q] .. gold_hi[q]-1; R is their union. out (7 * n
 *     entries, row-major [7][n]) receives per query: |C ∩ R|, |R|, |C|, Σ|r|, Σ|c|, Σ_r |r ∩ C|, Σ_c |c ∩ R|
 *     (integer lengths: touching intervals share no point). Each query's gold spans are sorted by start and merged
 *     into disjoint pieces; few retrieved intervals are clipped to each piece (only the clipped parts, usually
 *     none or one, are sorted), more are sorted and merged too and walked with the gold pieces by two pointers.
 *     with_union (optional, default true): false leaves |C| out (-1) where the clipping spares the sort.
 *     Checked before anything is written: the lengths of the arrays, every segment within its array, k >= 0,
 *     every interval 0 <= start <= end; every row_iv entry read is checked against the number of intervals as
 *     it is read (a bad one stops the call with ValueError). Status 0: done; 1: nothing written, because a sum
 *     might not fit in 64 bits (the largest coordinate times the most intervals of one query reaches 2**62;
 *     the caller then takes its NumPy path). The GIL is released during the pass. */
typedef struct { int64_t s, e; } sp_iv;

/* a 1-D C-contiguous array of int64 (or, with int32_too, of int32: itemsize tells) */
static int sp_get_ints(PyObject *obj, Py_buffer *b, int writable, int int32_too, const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, b, flags) < 0) return -1;
    const char *f = b->format ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    int wide = b->itemsize == 8 && (strcmp(f, "q") == 0 || (sizeof(long) == 8 && strcmp(f, "l") == 0));
    int narrow = int32_too && b->itemsize == 4 && (strcmp(f, "i") == 0 || (sizeof(long) == 4 && strcmp(f, "l") == 0));
    if (b->ndim > 1 || !(wide || narrow)) {
        PyBuffer_Release(b);
        PyErr_Format(PyExc_ValueError, "span_lengths: %s must be a 1-D C-contiguous int64%s array", name,
                     int32_too ? " or int32" : "");
        return -1;
    }
    return 0;
}

static void sp_sort(sp_iv *a, int64_t n) {
    if (n <= 24) {
        for (int64_t i = 1; i < n; i++) {
            sp_iv x = a[i];
            int64_t j = i - 1;
            while (j >= 0 && a[j].s > x.s) { a[j + 1] = a[j]; j--; }
            a[j + 1] = x;
        }
        return;
    }
    /* heapsort on the starts (no recursion, no allocation) */
    for (int64_t start = n / 2 - 1; start >= 0; start--) {
        int64_t root = start;
        for (;;) {
            int64_t c = 2 * root + 1;
            if (c >= n) break;
            if (c + 1 < n && a[c + 1].s > a[c].s) c++;
            if (a[root].s >= a[c].s) break;
            sp_iv t = a[root]; a[root] = a[c]; a[c] = t;
            root = c;
        }
    }
    for (int64_t end = n - 1; end > 0; end--) {
        sp_iv t = a[0]; a[0] = a[end]; a[end] = t;
        int64_t root = 0;
        for (;;) {
            int64_t c = 2 * root + 1;
            if (c >= end) break;
            if (c + 1 < end && a[c + 1].s > a[c].s) c++;
            if (a[root].s >= a[c].s) break;
            sp_iv t2 = a[root]; a[root] = a[c]; a[c] = t2;
            root = c;
        }
    }
}

/* sorts a[0..n) by start into out (n <= SP_FEW): each interval's place is the number of keys below its own, the
 * key being its start above the index bits (all keys differ); no branch on the data. a and out do not overlap. */
#define SP_FEW 32
static void sp_sort_few(const sp_iv *a, int64_t n, sp_iv *out) {
    uint64_t key[SP_FEW];
    for (int64_t i = 0; i < n; i++) key[i] = ((uint64_t)a[i].s << 5) | (uint64_t)i;
    for (int64_t i = 0; i < n; i++) {
        int64_t below = 0;
        for (int64_t j = 0; j < n; j++) below += key[j] < key[i];
        out[below] = a[i];
    }
}

/* the disjoint pieces of sorted intervals (empty ones left out); returns their count, *len their length */
static int64_t sp_pieces(const sp_iv *a, int64_t n, sp_iv *p, int64_t *len) {
    int64_t np_ = 0, total = 0;
    for (int64_t i = 0; i < n; i++) {
        if (a[i].e <= a[i].s) continue;
        if (np_ > 0 && a[i].s <= p[np_ - 1].e) {
            if (a[i].e > p[np_ - 1].e) p[np_ - 1].e = a[i].e;
        } else {
            p[np_++] = a[i];
        }
    }
    for (int64_t i = 0; i < np_; i++) total += p[i].e - p[i].s;
    *len = total;
    return np_;
}

/* |P ∩ Q| of two lists of disjoint sorted pieces */
static int64_t sp_overlap(const sp_iv *p, int64_t np_, const sp_iv *q, int64_t nq) {
    int64_t i = 0, j = 0, total = 0;
    while (i < np_ && j < nq) {
        int64_t lo = p[i].s > q[j].s ? p[i].s : q[j].s, hi = p[i].e < q[j].e ? p[i].e : q[j].e;
        if (hi > lo) total += hi - lo;
        if (p[i].e < q[j].e) i++; else j++;
    }
    return total;
}

/* Σ_a |a ∩ P| for intervals a sorted by start and disjoint sorted pieces P */
static int64_t sp_covered(const sp_iv *a, int64_t n, const sp_iv *p, int64_t np_) {
    int64_t j = 0, total = 0;
    for (int64_t i = 0; i < n; i++) {
        while (j < np_ && p[j].e <= a[i].s) j++;
        for (int64_t t = j; t < np_ && p[t].s < a[i].e; t++) {
            int64_t lo = p[t].s > a[i].s ? p[t].s : a[i].s, hi = p[t].e < a[i].e ? p[t].e : a[i].e;
            if (hi > lo) total += hi - lo;
        }
    }
    return total;
}

/* sorts n intervals of a into out (a may be out): the branch-free way when few, else in place */
static void sp_sort_into(sp_iv *a, int64_t n, sp_iv *out, int few_ok) {
    if (few_ok && n <= SP_FEW && a != out) { sp_sort_few(a, n, out); return; }
    if (a != out) memcpy(out, a, (size_t)n * sizeof(sp_iv));
    sp_sort(out, n);
}

/* |∪_c (c ∩ w)|: the length of the union of the intervals of a clipped to the window w (buf, sorted: scratch
 * of n cells each) */
static int64_t sp_clipped(const sp_iv *a, int64_t n, sp_iv w, sp_iv *buf, sp_iv *sorted, int few_ok) {
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t lo = a[i].s > w.s ? a[i].s : w.s, hi = a[i].e < w.e ? a[i].e : w.e;
        if (hi > lo) { buf[cnt].s = lo; buf[cnt].e = hi; cnt++; }
    }
    if (cnt <= 1) return cnt ? buf[0].e - buf[0].s : 0;
    sp_sort_into(buf, cnt, sorted, few_ok);
    int64_t len;
    sp_pieces(sorted, cnt, buf, &len);
    return len;
}

/* The seven lengths of one query (see span_lengths) from its retrieved intervals rv (m, in any order, rsum their
 * total) and its gold intervals sorted by start gv (g, gsum) with their pieces gp (ngp, gunion). Few retrieved
 * intervals against few gold pieces: each clipped to each piece, and the retrieved ones sorted only when their
 * union is asked for (with_union; else |C| is -1); otherwise both sorted and merged. rp, t1, t2: scratch of m. */
static void sp_query(sp_iv *rv, int64_t m, int64_t rsum, const sp_iv *gv, int64_t g, int64_t gsum, const sp_iv *gp,
                     int64_t ngp, int64_t gunion, int with_union, int few_ok, sp_iv *rp, sp_iv *t1, sp_iv *t2,
                     int64_t res[7]) {
    int64_t inter = 0, gcov = 0, rcov = 0, runion = -1;
    if (m <= 64 && g <= 64 && m * (ngp > g ? ngp : g) <= 64) {
        for (int64_t p = 0; p < ngp; p++) inter += sp_clipped(rv, m, gp[p], t1, t2, few_ok);
        if (gunion == gsum) gcov = inter;
        else for (int64_t j = 0; j < g; j++) gcov += sp_clipped(rv, m, gv[j], t1, t2, few_ok);
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < ngp; p++) {
                int64_t lo = rv[i].s > gp[p].s ? rv[i].s : gp[p].s, hi = rv[i].e < gp[p].e ? rv[i].e : gp[p].e;
                rcov += hi > lo ? hi - lo : 0;
            }
        if (with_union) {
            sp_sort_into(rv, m, t1, few_ok);
            sp_pieces(t1, m, rp, &runion);
        }
    } else {
        sp_sort_into(rv, m, t1, few_ok);
        int64_t nrp = sp_pieces(t1, m, rp, &runion);
        inter = sp_overlap(rp, nrp, gp, ngp);
        gcov = gunion == gsum ? inter : sp_covered(gv, g, rp, nrp);
        rcov = runion == rsum ? inter : sp_covered(t1, m, gp, ngp);
    }
    res[0] = inter; res[1] = gunion; res[2] = runion; res[3] = gsum; res[4] = rsum; res[5] = gcov; res[6] = rcov;
}

/* checks every interval (0 <= start <= end) and keeps the largest end; 0 when one is bad */
static int sp_intervals_ok(const int64_t *s, const int64_t *e, Py_ssize_t n, int64_t *top) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] < 0 || e[i] < s[i]) return 0;
        if (e[i] > *top) *top = e[i];
    }
    return 1;
}

/* checks every segment within [0, len] and keeps the longest; 0 when one is bad */
static int sp_segments_ok(const int64_t *lo, const int64_t *hi, Py_ssize_t n, Py_ssize_t len, int64_t *longest) {
    for (Py_ssize_t q = 0; q < n; q++) {
        if (lo[q] < 0 || hi[q] < lo[q] || hi[q] > len) return 0;
        if (hi[q] - lo[q] > *longest) *longest = hi[q] - lo[q];
    }
    return 1;
}

static PyObject *span_lengths(PyObject *self, PyObject *args) {
    static const char *names[11] = {"k", "seg_lo", "seg_hi", "row_iv", "iv_start", "iv_end", "gold_lo", "gold_hi",
                                    "gold_start", "gold_end", "out"};
    PyObject *objs[11];
    int with_union = 1;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOO|p", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6], &objs[7], &objs[8], &objs[9], &objs[10], &with_union))
        return NULL;
    Py_buffer b[11];
    for (int i = 0; i < 11; i++) {
        if (sp_get_ints(objs[i], &b[i], i == 10, i == 3, names[i]) < 0) {
            for (int j = 0; j < i; j++) PyBuffer_Release(&b[j]);
            return NULL;
        }
    }
    const int64_t *k = b[0].buf, *seg_lo = b[1].buf, *seg_hi = b[2].buf;
    const int64_t *row64 = b[3].itemsize == 8 ? (const int64_t *)b[3].buf : NULL;
    const int32_t *row32 = b[3].itemsize == 4 ? (const int32_t *)b[3].buf : NULL;
    const int64_t *iv_s = b[4].buf, *iv_e = b[5].buf, *g_lo = b[6].buf, *g_hi = b[7].buf;
    const int64_t *g_s = b[8].buf, *g_e = b[9].buf;
    int64_t *out = b[10].buf;
    Py_ssize_t n = b[0].len / 8, n_rows = b[3].len / b[3].itemsize, n_iv = b[4].len / 8, n_gold = b[8].len / 8;
    const char *why = NULL;
    int64_t top = 0, longest_r = 0, longest_g = 0;
    if (b[1].len / 8 != n || b[2].len / 8 != n || b[6].len / 8 != n || b[7].len / 8 != n || b[5].len / 8 != n_iv
            || b[9].len / 8 != n_gold || b[10].len / 8 != 7 * n)
        why = "span_lengths: the arrays' lengths do not agree";
    else if (!sp_segments_ok(seg_lo, seg_hi, n, n_rows, &longest_r) || !sp_segments_ok(g_lo, g_hi, n, n_gold, &longest_g))
        why = "span_lengths: a segment lies outside its array";
    else if (!sp_intervals_ok(iv_s, iv_e, n_iv, &top) || !sp_intervals_ok(g_s, g_e, n_gold, &top))
        why = "span_lengths: an interval has a negative start or ends before it starts";
    for (Py_ssize_t q = 0; why == NULL && q < n; q++)
        if (k[q] < 0) why = "span_lengths: a negative cutoff";
    /* every sum of one query is at most (its intervals) x (the largest coordinate) */
    int too_large = why == NULL && (longest_r + longest_g + 1) > ((int64_t)1 << 62) / (top + 1);
    /* the branch-free sort of few intervals packs a start above 5 bits of index */
    int few_ok = top < ((int64_t)1 << 58);
    sp_iv *scratch = NULL;
    if (why == NULL && !too_large) {
        size_t cells = (size_t)(4 * longest_r + 3 * longest_g + 1);
        scratch = (sp_iv *)PyMem_RawMalloc(cells * sizeof(sp_iv));
        if (scratch == NULL) {
            for (int j = 0; j < 11; j++) PyBuffer_Release(&b[j]);
            return PyErr_NoMemory();
        }
    }
    int bad_row = 0;
    if (why == NULL && !too_large) {
        Py_BEGIN_ALLOW_THREADS
        sp_iv *rv = scratch, *rp = rv + longest_r, *t1 = rp + longest_r, *t2 = t1 + longest_r;
        sp_iv *ga = t2 + longest_r, *gv = ga + longest_g, *gp = gv + longest_g;
        int64_t res[7];
        for (Py_ssize_t q = 0; q < n && !bad_row; q++) {
            int64_t m = 0, rsum = 0, g = 0, gsum = 0, gunion;
            for (int64_t r = seg_lo[q]; r < seg_hi[q] && m < k[q]; r++) {
                int64_t i = row64 != NULL ? row64[r] : (int64_t)row32[r];
                if (i == -1) continue;
                if (i < 0 || i >= n_iv) { bad_row = 1; break; }
                rv[m].s = iv_s[i]; rv[m].e = iv_e[i];
                rsum += iv_e[i] - iv_s[i];
                m++;
            }
            for (int64_t j = g_lo[q]; j < g_hi[q]; j++) {
                ga[g].s = g_s[j]; ga[g].e = g_e[j];
                gsum += g_e[j] - g_s[j];
                g++;
            }
            sp_sort_into(ga, g, gv, few_ok);
            int64_t ngp = sp_pieces(gv, g, gp, &gunion);
            sp_query(rv, m, rsum, gv, g, gsum, gp, ngp, gunion, with_union, few_ok, rp, t1, t2, res);
            for (int c = 0; c < 7; c++) out[c * n + q] = res[c];
        }
        Py_END_ALLOW_THREADS
        if (bad_row) why = "span_lengths: a row points to no interval";
    }
    PyMem_RawFree(scratch);
    for (int j = 0; j < 11; j++) PyBuffer_Release(&b[j]);
    if (why != NULL) {
        PyErr_SetString(PyExc_ValueError, why);
        return NULL;
    }
    return PyLong_FromLong(too_large);
}
/* ==== spans (end) ================================================================================== */

static PyObject *features(PyObject *self, PyObject *unused) {
#if defined(HAVE_SSE2)
    int sse2 = 1;
#else
    int sse2 = 0;
#endif
#if (defined(__unix__) || defined(__APPLE__)) && defined(MADV_DONTNEED)
    int release = HAVE_FILEMAP;
#else
    int release = 0;
#endif
#if defined(__SANITIZE_ADDRESS__)
    int asan = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    int asan = 1;
#else
    int asan = 0;
#endif
#else
    int asan = 0;
#endif
    return Py_BuildValue("{s:O,s:O,s:O,s:O}", "sse2", sse2 ? Py_True : Py_False, "file_map",
                         HAVE_FILEMAP ? Py_True : Py_False, "page_release", release ? Py_True : Py_False,
                         "address_sanitizer", asan ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Sizes, values, keys and lookups of a list of dicts in one call."},
    {"find_odd_whitespace", find_odd_whitespace, METH_VARARGS, "First tab/CR/VT/FF byte, or -1."},
    {"prefixes8", prefixes8, METH_VARARGS, "First 8 bytes of each string, zero-padded, as uint64."},
    {"match_segments", match_segments, METH_VARARGS, "Per-row match of strings against small per-segment sets."},
    {"first_duplicate_in_segments", first_duplicate_in_segments, METH_VARARGS,
     "First string equal to an earlier one of its segment."},
    {"sort_segments_desc", sort_segments_desc, METH_VARARGS, "Stable descending sort within segments."},
    {"scan_trec", scan_trec, METH_VARARGS, "Tokenize TREC run/qrels lines into columnar buffers."},
    {"rank_in_segments", rank_in_segments, METH_VARARGS, "Binary searches within descending segments."},
    {"numba_argsort_segments", numba_argsort_segments, METH_VARARGS, "numba's quicksort argsort within segments."},
    {"kahan_cumsum_runs", kahan_cumsum_runs, METH_VARARGS, "Compensated running sums within runs (pandas' cumsum)."},
    {"fusion_pairs", fusion_pairs, METH_VARARGS, "Fusion: (query, document) pairs of several runs, first-seen order."},
    {"fusion_layout", fusion_layout, METH_VARARGS, "Fusion: the fused rows of several runs and each run's row and place."},
    {"span_lengths", span_lengths, METH_VARARGS, "Span measures: per query the intersection, unions, sums and covered sums of intervals."},
    {"features", features, METH_NOARGS, "What this build has: SIMD, the file mapping, page release."},
    {"first_nul", ids_first_nul, METH_O, "Index of the first str holding a NUL character, or -1."},
    {"str_ids", ids_str_ids, METH_O, "(whether every item is a str, index of the first holding a NUL or -1)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_accel", "Optional C helpers: dict ingestion, TREC scanning, string matching.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__accel(void) {
    init_byte_class();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
#if HAVE_FILEMAP
    MappingFault = PyErr_NewException("ragrade._accel.MappingFault", PyExc_OSError, NULL);
    if (MappingFault == NULL || PyModule_AddObjectRef(m, "MappingFault", MappingFault) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyType_Ready(&FileMapType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&FileMapType);
    if (PyModule_AddObject(m, "FileMap", (PyObject *)&FileMapType) < 0) {
        Py_DECREF(&FileMapType);
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
