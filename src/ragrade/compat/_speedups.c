/*
 * ragrade.compat._speedups: the C helpers of the drop-ins (ragrade.compat), a module of their own.
 *
 * The pytrec_eval drop-in's fast path (pytrec_join, pytrec_qrels, nested_dicts) and the trec_eval drop-in's
 * rank order and output (sort_segments_trec, trec_lines, first_duplicate_in_segments) and its look at the
 * judgments' lines (blank_line_head). The drop-ins use only ragrade's public API and this module, as if they
 * were a separate package; ragrade._accel serves the engine.
 * If this module fails to build, the drop-ins use equivalent NumPy/Arrow code (the same output, slower).
 *
 * Every function checks the sizes and offsets of the buffers it is given before it reads or writes through
 * them, and raises ValueError when they are inconsistent.
 *
 * first_duplicate_in_segments(off, data, seg_off) -> int
 *     Strings in the Arrow layout (int64 offsets into data) grouped in segments (rows seg_off[s] ..
 *     seg_off[s+1]-1). The first row whose string equals an earlier row's of the same segment, or -1.
 *     One open-addressing hash table (FNV-1a), sized for the largest segment and reused; GIL released.
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

/* NUL characters in str keys (ids never hold one): copied from ragrade/_accel.c's id rule. */
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

/* ==== pyspeed: ragrade.compat.pytrec_eval's fast path (begin) ======================================
 *
 * pytrec_join(runs, docs, starts, jcounts, rows_out, pos_out, counts_out, float32) -> (status, found, infinite)
 *     runs[i] is one query's ranking {doc: score}; its judged ids are docs[starts[i] + t] for t < jcounts[i]
 *     (docs a list of exactly-str, else ValueError; ranges outside docs: ValueError). For every judged id
 *     t in runs[i]: its qrels row starts[i] + t and its 0-based rank in runs[i] under trec_eval's order
 *     (score descending, equal scores by doc id descending, compared by code points as strcmp compares
 *     UTF-8) are appended to
 *     rows_out / pos_out, each query's judgments in rank order; counts_out[i] = len(runs[i]). With
 *     float32, scores are rounded to float32 first (pytrec_eval stores them so), and a score beyond
 *     float32's range is status 3. Status 0 ok; 1 runs[i] is not exactly a dict; 2 one of its keys is not
 *     exactly str or holds a NUL; 3 a score is not exactly float or int, is NaN, or an int beyond float64. Only exact
 *     types are read, so no Python code runs during the call. `found` is the number of rows written,
 *     `infinite` the number of infinite scores. Buffers (int64, C-contiguous) are checked first:
 *     ValueError when too small.
 *
 * pytrec_qrels(dicts, counts_out, grades_out) -> (status, docs)
 *     Judgments {doc: grade} of each query: status 0 when every element is exactly a dict of exactly-str keys
 *     (without NUL) and exactly-int grades (within int64), and then docs (a list of every id, dict after dict, in iteration
 *     order; a list the cycle collector does not track: it holds str only and is not to be changed), counts_out
 *     (int64) each dict's size and grades_out (float64) every grade in the same order; else
 *     status 1 (not a dict), 2 (a key) or 3 (a grade) and docs None. ValueError when an output is too small.
 *
 * nested_dicts(qids, names, values, by_name=False) -> {qids[i]: {names[j]: values[i, j]}}
 *     values: float64, C-contiguous, len(qids) * len(names) items (row-major; with by_name, one row per
 *     name: the value is values[j, i]); qids and names lists of exactly-str (TypeError otherwise). Equal keys: the last one wins, as dict(zip(...)). Every row's
 *     dict starts as a copy of the first row's (the key table is copied, not rebuilt); equal values often
 *     share one float object (a small direct-mapped cache keyed by the value's bits).
 */

typedef struct { double s; PyObject *k; int64_t row; } PtFound;
typedef struct { double s; PyObject *k; PyObject *v; } PtItem;
#if defined(__GNUC__) || defined(__clang__)
#define PT_PREFETCH(ptr) __builtin_prefetch((const void *)(ptr))
#else
#define PT_PREFETCH(ptr) ((void)(ptr))
#endif

/* 1 and *out: v's score (exact float or int, not NaN; float32-rounded with f32); 0 otherwise. */
static inline int pt_score(PyObject *v, int f32, double *out) {
    double x;
    if (PyFloat_CheckExact(v)) {
        x = PyFloat_AS_DOUBLE(v);
    } else if (PyLong_CheckExact(v)) {
        x = PyLong_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    } else {
        return 0;
    }
    if (isnan(x)) return 0;
    if (f32) {
        if (isinf(x)) { *out = x; return 1; }
        if (x > 3.4028234663852886e38 || x < -3.4028234663852886e38) return 0;  /* FLT_MAX: no cast overflow */
        x = (double)(float)x;
    }
    *out = x;
    return 1;
}

/* trec_eval's order: a ranks before b. Exact str only: PyUnicode_Compare cannot fail. */
static inline int pt_before(double sa, PyObject *ka, double sb, PyObject *kb) {
    if (sa != sb) return sa > sb;
    return PyUnicode_Compare(ka, kb) > 0;
}

static int pt_cmp_found(const void *x, const void *y) {
    const PtFound *a = (const PtFound *)x, *b = (const PtFound *)y;
    if (pt_before(a->s, a->k, b->s, b->k)) return -1;
    if (pt_before(b->s, b->k, a->s, a->k)) return 1;
    return 0;
}

static PyObject *pytrec_join(PyObject *self, PyObject *args) {
    PyObject *runs, *docs, *objs[5];
    int f32;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOp", &PyList_Type, &runs, &PyList_Type, &docs, &objs[0], &objs[1],
                          &objs[2], &objs[3], &objs[4], &f32)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(runs), ndocs = PyList_GET_SIZE(docs);
    Py_buffer b[5];
    if (get_buffers(objs, b, 5, 2) < 0) return NULL;
    const int64_t *starts = (const int64_t *)b[0].buf, *jcounts = (const int64_t *)b[1].buf;
    int64_t *rows_out = (int64_t *)b[2].buf, *pos_out = (int64_t *)b[3].buf, *counts = (int64_t *)b[4].buf;
    Py_ssize_t cap = b[2].len / 8 < b[3].len / 8 ? b[2].len / 8 : b[3].len / 8;
    PtFound *found = NULL;
    PtItem *items = NULL;
    int64_t *diff = NULL;
    const char *err = NULL;
    long status = 0;
    Py_ssize_t nfound = 0, ninf = 0;
    if (b[0].len / 8 < n || b[1].len / 8 < n || b[4].len / 8 < n) {
        err = "pytrec_join: starts, jcounts or counts_out too small";
        goto done;
    }
    /* sizes first: every query's judgments within docs, the outputs large enough */
    Py_ssize_t jmax = 0, rmax = 0, jtotal = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *R = PyList_GET_ITEM(runs, i);
        int64_t a = starts[i], c = jcounts[i];
        if (a < 0 || c < 0 || a > ndocs || c > ndocs - a) {
            err = "pytrec_join: a judgment range outside docs";
            goto done;
        }
        jtotal += c;
        if (c > jmax) jmax = c;
        if (PyDict_CheckExact(R) && PyDict_GET_SIZE(R) > rmax) rmax = PyDict_GET_SIZE(R);
    }
    if (jtotal > cap) { err = "pytrec_join: rows_out or pos_out too small"; goto done; }
    found = (PtFound *)PyMem_Malloc(sizeof(PtFound) * (size_t)(jmax + 1));
    items = (PtItem *)PyMem_Malloc(sizeof(PtItem) * (size_t)(rmax + 1));
    diff = (int64_t *)PyMem_Malloc(sizeof(int64_t) * (size_t)(jmax + 2));
    if (found == NULL || items == NULL || diff == NULL) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        PyObject *R = PyList_GET_ITEM(runs, i), *k, *v;
        if (!PyDict_CheckExact(R)) { status = 1; break; }
        Py_ssize_t nr = 0, p = 0;
        /* the entries first (the dict's own array, in order), the key and value objects they point to
           fetched ahead; then their types and scores. No Python code runs in between. */
        while (PyDict_Next(R, &p, &k, &v)) {
            if (nr >= rmax) { err = "pytrec_join: a ranking changed size"; goto done; }
            PT_PREFETCH(k);
            PT_PREFETCH(v);
            items[nr].k = k;
            items[nr].v = v;
            nr++;
        }
        /* the judged ids (docs[starts[i] .. starts[i] + jcounts[i]), checked above; the list cannot change:
           no Python code runs), fetched ahead too */
        Py_ssize_t nj = (Py_ssize_t)jcounts[i];
        PyObject **jd = nj > 0 ? ((PyListObject *)docs)->ob_item + starts[i] : NULL;
        if (nr > 0)
            for (Py_ssize_t t = 0; t < nj; t++) PT_PREFETCH(jd[t]);
        for (Py_ssize_t e = 0; e < nr; e++) {  /* every key exact str: the lookups below run no Python code */
            if (!PyUnicode_CheckExact(items[e].k)) { status = 2; break; }
            Py_ssize_t klen = PyUnicode_GET_LENGTH(items[e].k);  /* the id rule: a NUL goes to the general path */
            if (klen > 0 && str_has_nul(items[e].k, klen)) { status = 2; break; }
            double x;
            if (!pt_score(items[e].v, f32, &x)) { status = 3; break; }
            if (isinf(x)) ninf++;
            items[e].s = x;
        }
        if (status != 0) break;
        counts[i] = nr;
        Py_ssize_t m = 0;
        for (Py_ssize_t t = 0; t < nj && nr > 0; t++) {
            k = jd[t];
            if (!PyUnicode_CheckExact(k)) { err = "pytrec_join: a judged doc id is not str"; goto done; }
            PyObject *sv = PyDict_GetItemWithError(R, k);
            if (sv == NULL && PyErr_Occurred()) goto done;
            if (sv != NULL) {
                double x;
                if (!pt_score(sv, f32, &x)) { status = 3; break; }
                found[m].s = x;
                found[m].k = k;
                found[m].row = starts[i] + t;
                m++;
            }
        }
        if (status != 0) break;
        if (m == 0) continue;
        if (m > 1) qsort(found, (size_t)m, sizeof(PtFound), pt_cmp_found);
        memset(diff, 0, sizeof(int64_t) * (size_t)(m + 1));
        /* item e ranks before found[u] for every u >= (number of found entries at or above e) */
        double top = found[0].s, bottom = found[m - 1].s;
        for (Py_ssize_t e = 0; e < nr; e++) {
            double s = items[e].s;
            Py_ssize_t lo;
            if (s > top) lo = 0;
            else if (s < bottom) lo = m;
            else if (m <= 32) {  /* few judged: a branch-free count beats a binary search */
                Py_ssize_t c = 0, tie = 0;
                for (Py_ssize_t u = 0; u < m; u++) { c += found[u].s > s; tie += found[u].s == s; }
                if (tie)
                    for (Py_ssize_t u = 0; u < m; u++)
                        if (found[u].s == s) c += PyUnicode_Compare(found[u].k, items[e].k) >= 0;
                lo = c;
            } else {
                Py_ssize_t hi = m;
                lo = 0;
                while (lo < hi) {
                    Py_ssize_t mid = lo + (hi - lo) / 2;
                    if (!pt_before(s, items[e].k, found[mid].s, found[mid].k)) lo = mid + 1; else hi = mid;
                }
            }
            diff[lo]++;
        }
        int64_t above = 0;
        for (Py_ssize_t u = 0; u < m; u++) {
            above += diff[u];
            if (nfound >= cap) { err = "pytrec_join: rows_out or pos_out too small"; goto done; }
            rows_out[nfound] = found[u].row;
            pos_out[nfound] = above;
            nfound++;
        }
    }
done:
    PyMem_Free(found);
    PyMem_Free(items);
    PyMem_Free(diff);
    for (int j = 0; j < 5; j++) PyBuffer_Release(&b[j]);
    if (err != NULL) { PyErr_SetString(PyExc_ValueError, err); return NULL; }
    if (PyErr_Occurred()) return NULL;
    return Py_BuildValue("lnn", status, nfound, ninf);
}

static PyObject *pytrec_qrels(PyObject *self, PyObject *args) {
    PyObject *dicts, *objs[2];
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &dicts, &objs[0], &objs[1])) return NULL;
    Py_buffer b[2];
    if (get_buffers(objs, b, 2, 0) < 0) return NULL;
    int64_t *counts = (int64_t *)b[0].buf;
    double *grades = (double *)b[1].buf;
    Py_ssize_t n = PyList_GET_SIZE(dicts), cap = b[1].len / 8, w = 0;
    long status = 0;
    PyObject *copies = NULL, **kv = NULL;
    const char *err = NULL;
    if (b[0].len / 8 < n) { err = "pytrec_qrels: counts_out too small"; goto done; }
    Py_ssize_t total = 0, dmax = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i);
        if (!PyDict_CheckExact(d)) { status = 1; goto done; }
        total += PyDict_GET_SIZE(d);
        if (PyDict_GET_SIZE(d) > dmax) dmax = PyDict_GET_SIZE(d);
    }
    if (total > cap) { err = "pytrec_qrels: grades_out too small"; goto done; }
    kv = (PyObject **)PyMem_Malloc(sizeof(PyObject *) * 2 * (size_t)(dmax + 1));
    if (kv == NULL) { PyErr_NoMemory(); goto done; }
    copies = PyList_New(total);  /* every id, in order */
    if (copies == NULL) goto done;
    for (Py_ssize_t i = 0; i < n && status == 0; i++) {
        PyObject *d = PyList_GET_ITEM(dicts, i), *k, *v;
        Py_ssize_t p = 0, c = 0, nd = 0;
        while (PyDict_Next(d, &p, &k, &v)) {  /* the entries first, their ids fetched ahead */
            if (nd >= dmax) { err = "pytrec_qrels: a dict changed size"; goto done; }
            PT_PREFETCH(k);
            kv[2 * nd] = k;
            kv[2 * nd + 1] = v;
            nd++;
        }
        for (Py_ssize_t e = 0; e < nd; e++) {
            k = kv[2 * e];
            v = kv[2 * e + 1];
            if (!PyUnicode_CheckExact(k)) { status = 2; break; }
            Py_ssize_t klen = PyUnicode_GET_LENGTH(k);  /* the id rule: a NUL goes to the general path */
            if (klen > 0 && str_has_nul(k, klen)) { status = 2; break; }
            if (!PyLong_CheckExact(v)) { status = 3; break; }
            int overflow = 0;
            long long g = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || (g == -1 && PyErr_Occurred())) { PyErr_Clear(); status = 3; break; }
            if (w >= cap || w >= total) { err = "pytrec_qrels: a dict changed size"; goto done; }
            Py_INCREF(k);
            PyList_SET_ITEM(copies, w, k);
            grades[w++] = (double)g;
            c++;
        }
        if (status != 0) break;
        counts[i] = c;
    }
    if (status == 0 && w != total) { err = "pytrec_qrels: a dict changed size"; goto done; }
done:
    PyMem_Free(kv);
    for (int j = 0; j < 2; j++) PyBuffer_Release(&b[j]);
    if (err != NULL) { Py_XDECREF(copies); PyErr_SetString(PyExc_ValueError, err); return NULL; }
    if (PyErr_Occurred()) { Py_XDECREF(copies); return NULL; }
    if (status != 0) { Py_XDECREF(copies); return Py_BuildValue("lO", status, Py_None); }
    /* a list of str only, never changed after: nothing in it for the cycle collector to find, so it is not
       tracked (as CPython stops tracking a tuple or dict of atomic values); otherwise each collection while
       the list is young walks its items, one cache miss per id */
    PyObject_GC_UnTrack(copies);
    PyObject *res = Py_BuildValue("lO", status, copies);
    Py_DECREF(copies);
    return res;
}

#define PT_CACHE 4096  /* a power of two */

/* nested_dicts' dicts of x[j * nq + i] (by_name) or x[i * nm + j]; qids and names: lists of exactly-str of nq and
   nm items (checked by the caller). */
static PyObject *nd_build(PyObject *qids_in, PyObject *names_in, Py_ssize_t nq, Py_ssize_t nm, const double *x,
                          int by_name) {
    /* private copies of the lists: a finalizer run by the garbage collector during an allocation below cannot
       change their sizes */
    PyObject *qids = PyList_GetSlice(qids_in, 0, nq), *names = PyList_GetSlice(names_in, 0, nm);
    uint64_t *bits = (uint64_t *)PyMem_Calloc(PT_CACHE, sizeof(uint64_t));
    PyObject **cached = (PyObject **)PyMem_Calloc(PT_CACHE, sizeof(PyObject *));
    PyObject *out = PyDict_New(), *first = NULL;
    if (bits == NULL || cached == NULL) { PyErr_NoMemory(); goto fail; }
    if (out == NULL || qids == NULL || names == NULL) goto fail;
    if (PyList_GET_SIZE(qids) != nq || PyList_GET_SIZE(names) != nm) {
        PyErr_SetString(PyExc_ValueError, "nested_dicts: a list changed size");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < nq; i++) {
        /* exact str keys and float values: setting them runs no Python code of their own */
        PyObject *d = first == NULL ? PyDict_New() : PyDict_Copy(first);
        if (d == NULL) goto fail;
        for (Py_ssize_t j = 0; j < nm; j++) {
            double y = by_name ? x[j * nq + i] : x[i * nm + j];
            uint64_t u;
            memcpy(&u, &y, 8);
            size_t slot = (size_t)((u * 0x9E3779B97F4A7C15ULL) >> 52) & (PT_CACHE - 1);
            PyObject *f = cached[slot];
            if (f == NULL || bits[slot] != u) {
                if ((f = PyFloat_FromDouble(y)) == NULL) { Py_DECREF(d); goto fail; }
                Py_XDECREF(cached[slot]);
                cached[slot] = f;  /* the cache holds the new reference */
                bits[slot] = u;
            }
            if (PyDict_SetItem(d, PyList_GET_ITEM(names, j), f) < 0) { Py_DECREF(d); goto fail; }
        }
        if (PyDict_SetItem(out, PyList_GET_ITEM(qids, i), d) < 0) { Py_DECREF(d); goto fail; }
        if (first == NULL) first = d;  /* out holds a reference too */
        else Py_DECREF(d);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    Py_XDECREF(first);
    Py_XDECREF(qids);
    Py_XDECREF(names);
    if (cached != NULL)
        for (size_t k = 0; k < PT_CACHE; k++) Py_XDECREF(cached[k]);
    PyMem_Free(cached);
    PyMem_Free(bits);
    return out;
}

static int nd_check_str(PyObject *list, const char *what) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(list, i))) {
            PyErr_Format(PyExc_TypeError, "nested_dicts: %s must be str", what);
            return -1;
        }
    return 0;
}

static PyObject *nested_dicts(PyObject *self, PyObject *args) {
    PyObject *qids, *names, *vals;
    int by_name = 0;
    if (!PyArg_ParseTuple(args, "O!O!O|p", &PyList_Type, &qids, &PyList_Type, &names, &vals, &by_name)) return NULL;
    Py_ssize_t nq = PyList_GET_SIZE(qids), nm = PyList_GET_SIZE(names);
    if (nd_check_str(qids, "query ids") < 0 || nd_check_str(names, "names") < 0) return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(vals, &b, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (nm != 0 && nq > PY_SSIZE_T_MAX / 8 / nm) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "nested_dicts: too many values");
        return NULL;
    }
    if (b.len != nq * nm * 8) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_ValueError, "nested_dicts: values must hold len(qids) * len(names) float64");
        return NULL;
    }
    PyObject *out = nd_build(qids, names, nq, nm, (const double *)b.buf, by_name);
    PyBuffer_Release(&b);
    return out;
}


/* ---- trec_eval drop-in (tespeed): trec_eval's rank order within segments -------------------------------
 * sort_segments_trec(scores, offsets, str_off, str_data, out, seg_begin, seg_end) -> None
 *     For segments seg_begin..seg_end-1 (rows offsets[s] .. offsets[s+1]-1 of float64 scores, n rows): out
 *     holds each segment's rows by descending score, equal scores by document id descending (the ids are
 *     row r's bytes str_data[str_off[r] : str_off[r+1]], int64 offsets, compared as unsigned bytes, a
 *     prefix before its extensions: strcmp's order, which is code-point order for UTF-8), rows equal in
 *     both in row order (a stable merge sort per segment). Every offset is checked first; the GIL is
 *     released while sorting.
 */
static inline int trec_first(const double *v, const int64_t *so, const unsigned char *sd, int64_t x, int64_t y) {
    /* 1 when row x ranks strictly before row y */
    if (v[x] != v[y]) return v[x] > v[y];
    int64_t nx = so[x + 1] - so[x], ny = so[y + 1] - so[y];
    int c = memcmp(sd + so[x], sd + so[y], (size_t)(nx < ny ? nx : ny));
    if (c != 0) return c > 0;
    return nx > ny;
}

static void sort_trec_stable(const double *v, const int64_t *so, const unsigned char *sd, int64_t *idx,
                             int64_t *tmp, int64_t n) {
    const int64_t run = 16;
    for (int64_t a = 0; a < n; a += run) {  /* insertion sort of short runs */
        int64_t z = a + run < n ? a + run : n;
        for (int64_t i = a + 1; i < z; i++) {
            int64_t x = idx[i];
            int64_t j = i;
            while (j > a && trec_first(v, so, sd, x, idx[j - 1])) { idx[j] = idx[j - 1]; j--; }
            idx[j] = x;
        }
    }
    int64_t *src = idx, *dst = tmp;
    for (int64_t width = run; width < n; width *= 2) {  /* bottom-up merges; rows equal in both: left first */
        for (int64_t a = 0; a < n; a += 2 * width) {
            int64_t m = a + width < n ? a + width : n, z = a + 2 * width < n ? a + 2 * width : n;
            int64_t i = a, j = m, k = a;
            while (i < m && j < z) dst[k++] = trec_first(v, so, sd, src[j], src[i]) ? src[j++] : src[i++];
            while (i < m) dst[k++] = src[i++];
            while (j < z) dst[k++] = src[j++];
        }
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof(int64_t));
}

static PyObject *sort_segments_trec(PyObject *self, PyObject *args) {
    PyObject *objs[5];
    long long seg_begin, seg_end;
    if (!PyArg_ParseTuple(args, "OOOOOLL", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &seg_begin, &seg_end))
        return NULL;
    Py_buffer b[5];
    if (get_buffers(objs, b, 5, 4) < 0) return NULL;
    const double *v = (const double *)b[0].buf;
    const int64_t *off = (const int64_t *)b[1].buf, *so = (const int64_t *)b[2].buf;
    const unsigned char *sd = (const unsigned char *)b[3].buf;
    int64_t *out = (int64_t *)b[4].buf;
    Py_ssize_t n = b[0].len / 8, nseg = b[1].len / 8 - 1, nstr = b[2].len / 8 - 1, dlen = b[3].len;
    int ok = nseg >= 0 && seg_begin >= 0 && seg_end <= nseg && seg_begin <= seg_end && b[4].len / 8 >= n
             && nstr >= n;
    int64_t longest = 0;
    for (Py_ssize_t s = seg_begin; ok && s < seg_end; s++) {
        if (off[s] < 0 || off[s + 1] < off[s] || off[s + 1] > n) ok = 0;
        else if (off[s + 1] - off[s] > longest) longest = off[s + 1] - off[s];
        for (int64_t r = ok ? off[s] : 0; ok && r < off[s + 1]; r++)
            if (so[r] < 0 || so[r + 1] < so[r] || so[r + 1] > dlen) ok = 0;
    }
    int64_t *tmp = ok ? (int64_t *)PyMem_RawMalloc((size_t)(longest > 0 ? longest : 1) * sizeof(int64_t)) : NULL;
    if (ok && tmp == NULL) {
        for (int j = 0; j < 5; j++) PyBuffer_Release(&b[j]);
        return PyErr_NoMemory();
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t s = seg_begin; s < seg_end; s++) {
            int64_t a = off[s], len = off[s + 1] - off[s];
            for (int64_t i = 0; i < len; i++) out[a + i] = a + i;
            sort_trec_stable(v, so, sd, out + a, tmp, len);
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(tmp);
    for (int j = 0; j < 5; j++) PyBuffer_Release(&b[j]);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "sort_segments_trec: inconsistent offsets or buffer sizes");
        return NULL;
    }
    Py_RETURN_NONE;
}
/* trec_lines(values, kinds, head_off, head_data, q_off, q_data, text_off, text_data, q_begin, q_end) -> bytes
 *     trec_eval -q's lines of queries q_begin..q_end-1: for each query i, for each column j,
 *     head_j TAB qid_i TAB value LF. nc = len(kinds), nq = len(q_off) - 1; strings are int64 offsets into
 *     bytes (heads: nc strings, qids: nq strings, texts: any number). kinds[j] = -1 - f < 0: the value is
 *     values[f * nq + i] (float64) printed as C's "%6.4f" (digits from round(|v| * 10^4) when the product is
 *     more than 10^-3 from a rounding boundary, else Python's own correctly rounded printing, which is
 *     printf's; a NaN as "  -nan" with its sign bit set, else "   nan"); kinds[j] = t >= 0: the text is text string t * nq + i, copied. Every
 *     offset and size is checked first (ValueError); the GIL is held (Python prints the rare values).
 */
typedef struct { char *buf; size_t len, cap; } trec_out;

static int trec_put(trec_out *o, const void *src, size_t n) {
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        while (cap < o->len + n) cap *= 2;
        char *nb = (char *)PyMem_Realloc(o->buf, cap);
        if (nb == NULL) return -1;
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, src, n);
    o->len += n;
    return 0;
}

static int offsets_ok(const int64_t *off, Py_ssize_t n, Py_ssize_t dlen) {
    if (n < 0) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (off[i] < 0 || off[i + 1] < off[i] || off[i + 1] > dlen) return 0;
    return 1;
}

/* "%6.4f" % v into out (room for 32 bytes): the length, or -1 when Python must print it (*fallback). */
static int fixed4_fast(double v, char *out) {
    double a = fabs(v);
    if (!(isfinite(v) && a < 1e7)) return -1;
    double x = a * 1e4, f = floor(x), r = x - f;
    if (!(fabs(r - 0.5) > 1e-3)) return -1;
    int64_t k = (int64_t)f + (r > 0.5 ? 1 : 0);
    int64_t ip = k / 10000, frac = k % 10000;
    char digits[24];
    int nd = 0;
    do { digits[nd++] = (char)('0' + ip % 10); ip /= 10; } while (ip > 0);
    int n = 0;
    if (signbit(v)) out[n++] = '-';
    while (nd > 0) out[n++] = digits[--nd];
    out[n++] = '.';
    out[n++] = (char)('0' + frac / 1000);
    out[n++] = (char)('0' + frac / 100 % 10);
    out[n++] = (char)('0' + frac / 10 % 10);
    out[n++] = (char)('0' + frac % 10);
    return n;
}

static PyObject *trec_lines(PyObject *self, PyObject *args) {
    PyObject *objs[8];
    long long q_begin, q_end;
    if (!PyArg_ParseTuple(args, "OOOOOOOOLL", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6], &objs[7], &q_begin, &q_end))
        return NULL;
    Py_buffer b[8];
    if (get_buffers(objs, b, 8, 8) < 0) return NULL;
    const double *values = (const double *)b[0].buf;
    const int64_t *kinds = (const int64_t *)b[1].buf, *ho = (const int64_t *)b[2].buf;
    const int64_t *qo = (const int64_t *)b[4].buf, *to = (const int64_t *)b[6].buf;
    const char *hd = (const char *)b[3].buf, *qd = (const char *)b[5].buf, *td = (const char *)b[7].buf;
    Py_ssize_t nc = b[1].len / 8, nq = b[4].len / 8 - 1, nt = b[6].len / 8 - 1;
    int ok = nq >= 0 && nt >= 0 && b[2].len / 8 - 1 == nc
             && q_begin >= 0 && q_begin <= q_end && q_end <= nq
             && offsets_ok(ho, nc, b[3].len) && offsets_ok(qo, nq, b[5].len) && offsets_ok(to, nt, b[7].len);
    Py_ssize_t nf = nq > 0 ? b[0].len / 8 / nq : 0;  /* float rows */
    for (Py_ssize_t j = 0; ok && j < nc; j++) {
        if (kinds[j] < 0) { if (kinds[j] < -(int64_t)nf) ok = 0; }
        else if (kinds[j] > nt || (kinds[j] + 1) * (int64_t)nq > nt) ok = 0;
    }
    if (!ok) {
        for (int j = 0; j < 8; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "trec_lines: inconsistent offsets or buffer sizes");
        return NULL;
    }
    trec_out o = {NULL, 0, 0};
    int failed = 0;
    char num[32];
    for (int64_t i = q_begin; i < q_end && !failed; i++) {
        const char *q = qd + qo[i];
        size_t qn = (size_t)(qo[i + 1] - qo[i]);
        for (Py_ssize_t j = 0; j < nc && !failed; j++) {
            failed |= trec_put(&o, hd + ho[j], (size_t)(ho[j + 1] - ho[j]));
            failed |= trec_put(&o, "\t", 1);
            failed |= trec_put(&o, q, qn);
            failed |= trec_put(&o, "\t", 1);
            if (kinds[j] >= 0) {
                int64_t t = kinds[j] * (int64_t)nq + i;
                failed |= trec_put(&o, td + to[t], (size_t)(to[t + 1] - to[t]));
            } else {
                double v = values[(-kinds[j] - 1) * (int64_t)nq + i];
                int n = fixed4_fast(v, num);
                if (n >= 0) {
                    failed |= trec_put(&o, num, (size_t)n);
                } else if (isnan(v)) {
                    failed |= trec_put(&o, signbit(v) ? "  -nan" : "   nan", 6);
                } else {
                    char *text = PyOS_double_to_string(v, 'f', 4, 0, NULL);
                    if (text == NULL) { failed = 1; break; }
                    size_t tn = strlen(text);
                    for (size_t pad = tn; pad < 6; pad++) failed |= trec_put(&o, " ", 1);
                    failed |= trec_put(&o, text, tn);
                    PyMem_Free(text);
                }
            }
            failed |= trec_put(&o, "\n", 1);
        }
    }
    for (int j = 0; j < 8; j++) PyBuffer_Release(&b[j]);
    if (failed) {
        PyMem_Free(o.buf);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    PyObject *res = PyBytes_FromStringAndSize(o.buf ? o.buf : "", (Py_ssize_t)o.len);
    PyMem_Free(o.buf);
    return res;
}
/* ---- end of the trec_eval drop-in (tespeed) block ---------------------------------------------------- */

/* ---- trec_eval drop-in: rank order and gather over the scanner's chunks ---------------------------------
 * The run's document ids come from the scanner as one Arrow large_string chunk per thread; these two read
 * them where they are (no combined copy first).
 *
 * rank_order_chunks(scores, offsets, chunk_offs, chunk_datas, out, seg_begin, seg_end, check_dups) -> int
 *     As sort_segments_trec (segments seg_begin..seg_end-1 of float64 scores; out gets each segment's rows
 *     by descending score, equal scores by id descending, then row order), the ids of the rows being the
 *     strings of the chunks one after the other: chunk c (chunk_offs[c] int64 offsets into the bytes
 *     chunk_datas[c]) holds the next len(chunk_offs[c]) - 1 rows. With check_dups, first the row of the
 *     first id listed twice in a segment (an FNV-1a hash table per segment) is returned and nothing is
 *     sorted; else -1. Every offset is checked first (ValueError); the GIL is released while working.
 *
 * gather_chunks(chunk_offs, chunk_datas, perm, out_off, out_data) -> None
 *     The strings of rows perm[0], perm[1], ... (rows numbered across the chunks as above) written one after
 *     the other to out_data (uint8), out_off (int64, len(perm) + 1) their offsets from 0. ValueError when a
 *     row is out of range or an output is too small.
 */
typedef struct {
    Py_ssize_t n;              /* chunks */
    Py_buffer *off, *data;     /* per chunk */
    int64_t *base;             /* first row of each chunk; base[n] = rows */
} ChunkIds;

static void chunks_release(ChunkIds *ch) {
    for (Py_ssize_t c = 0; c < ch->n; c++) {
        if (ch->off[c].obj) PyBuffer_Release(&ch->off[c]);
        if (ch->data[c].obj) PyBuffer_Release(&ch->data[c]);
    }
    PyMem_Free(ch->off); PyMem_Free(ch->data); PyMem_Free(ch->base);
    ch->off = ch->data = NULL; ch->base = NULL; ch->n = 0;
}

/* 0 and *ch filled (offsets checked against their data), or -1 with an exception set. */
static int chunks_get(PyObject *offs, PyObject *datas, ChunkIds *ch) {
    ch->n = 0; ch->off = ch->data = NULL; ch->base = NULL;
    if (!PyTuple_Check(offs) || !PyTuple_Check(datas) || PyTuple_GET_SIZE(offs) != PyTuple_GET_SIZE(datas)) {
        PyErr_SetString(PyExc_ValueError, "chunks: two tuples of the same length expected");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(offs);
    ch->off = (Py_buffer *)PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(Py_buffer));
    ch->data = (Py_buffer *)PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(Py_buffer));
    ch->base = (int64_t *)PyMem_Calloc((size_t)n + 1, sizeof(int64_t));
    if (!ch->off || !ch->data || !ch->base) { chunks_release(ch); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t c = 0; c < n; c++) {
        ch->n = c + 1;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(offs, c), &ch->off[c], PyBUF_C_CONTIGUOUS) < 0
            || PyObject_GetBuffer(PyTuple_GET_ITEM(datas, c), &ch->data[c], PyBUF_C_CONTIGUOUS) < 0) {
            chunks_release(ch);
            return -1;
        }
        Py_ssize_t rows = ch->off[c].len / 8 - 1;
        if (rows < 0 || !offsets_ok((const int64_t *)ch->off[c].buf, rows, ch->data[c].len)) {
            chunks_release(ch);
            PyErr_SetString(PyExc_ValueError, "chunks: inconsistent offsets");
            return -1;
        }
        ch->base[c + 1] = ch->base[c] + rows;
    }
    return 0;
}

typedef struct { const unsigned char *p; int64_t n; } IdRef;

/* The ids of rows r0..r1-1 (which must lie within the chunks) into refs[0 .. r1-r0-1]. */
static void chunks_refs(const ChunkIds *ch, int64_t r0, int64_t r1, IdRef *refs) {
    Py_ssize_t c = 0;
    while (c < ch->n && ch->base[c + 1] <= r0) c++;
    for (int64_t r = r0; r < r1; r++) {
        while (ch->base[c + 1] <= r) c++;
        const int64_t *o = (const int64_t *)ch->off[c].buf;
        int64_t i = r - ch->base[c];
        refs[r - r0].p = (const unsigned char *)ch->data[c].buf + o[i];
        refs[r - r0].n = o[i + 1] - o[i];
    }
}

static inline int ref_first(const double *v, const IdRef *refs, int64_t r0, int64_t x, int64_t y) {
    /* 1 when row x ranks strictly before row y (score descending, then id descending) */
    if (v[x] != v[y]) return v[x] > v[y];
    const IdRef *a = &refs[x - r0], *b = &refs[y - r0];
    int c = memcmp(a->p, b->p, (size_t)(a->n < b->n ? a->n : b->n));
    if (c != 0) return c > 0;
    return a->n > b->n;
}

static void sort_refs_stable(const double *v, const IdRef *refs, int64_t r0, int64_t *idx, int64_t *tmp,
                             int64_t n) {
    const int64_t run = 16;
    for (int64_t a = 0; a < n; a += run) {
        int64_t z = a + run < n ? a + run : n;
        for (int64_t i = a + 1; i < z; i++) {
            int64_t x = idx[i];
            int64_t j = i;
            while (j > a && ref_first(v, refs, r0, x, idx[j - 1])) { idx[j] = idx[j - 1]; j--; }
            idx[j] = x;
        }
    }
    int64_t *src = idx, *dst = tmp;
    for (int64_t width = run; width < n; width *= 2) {
        for (int64_t a = 0; a < n; a += 2 * width) {
            int64_t m = a + width < n ? a + width : n, z = a + 2 * width < n ? a + 2 * width : n;
            int64_t i = a, j = m, k = a;
            while (i < m && j < z) dst[k++] = ref_first(v, refs, r0, src[j], src[i]) ? src[j++] : src[i++];
            while (i < m) dst[k++] = src[i++];
            while (j < z) dst[k++] = src[j++];
        }
        int64_t *t = src; src = dst; dst = t;
    }
    if (src != idx) memcpy(idx, src, (size_t)n * sizeof(int64_t));
}

static PyObject *rank_order_chunks(PyObject *self, PyObject *args) {
    PyObject *objs[3], *offs, *datas;
    long long seg_begin, seg_end;
    int check_dups;
    if (!PyArg_ParseTuple(args, "OOOOOLLp", &objs[0], &objs[1], &offs, &datas, &objs[2], &seg_begin, &seg_end,
                          &check_dups))
        return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, b, 3, 2) < 0) return NULL;
    ChunkIds ch;
    if (chunks_get(offs, datas, &ch) < 0) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        return NULL;
    }
    const double *v = (const double *)b[0].buf;
    const int64_t *off = (const int64_t *)b[1].buf;
    int64_t *out = (int64_t *)b[2].buf;
    Py_ssize_t n = b[0].len / 8, nseg = b[1].len / 8 - 1;
    int ok = nseg >= 0 && seg_begin >= 0 && seg_end <= nseg && seg_begin <= seg_end && b[2].len / 8 >= n
             && ch.base[ch.n] == n;
    int64_t longest = 0;
    for (Py_ssize_t s = seg_begin; ok && s < seg_end; s++) {
        if (off[s] < 0 || off[s + 1] < off[s] || off[s + 1] > n)
            ok = 0;
        else if (off[s + 1] - off[s] > longest) longest = off[s + 1] - off[s];
    }
    int64_t r0 = ok && seg_end > seg_begin ? off[seg_begin] : 0, r1 = ok && seg_end > seg_begin ? off[seg_end] : 0;
    if (!ok || r1 < r0) {
        chunks_release(&ch);
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "rank_order_chunks: inconsistent offsets or buffer sizes");
        return NULL;
    }
    size_t tsize = 8;
    while (tsize < (size_t)longest * 2) tsize <<= 1;
    /* The ids' references are made one segment at a time (a buffer of the longest segment, not one per row of
       the range: a run of millions of rows would otherwise touch tens of MB of fresh memory for them). */
    IdRef *refs = (IdRef *)PyMem_RawMalloc((size_t)(longest > 0 ? longest : 1) * sizeof(IdRef));
    int64_t *tmp = (int64_t *)PyMem_RawMalloc((size_t)(longest > 0 ? longest : 1) * sizeof(int64_t));
    int64_t *table = check_dups ? (int64_t *)PyMem_RawMalloc(tsize * sizeof(int64_t)) : NULL;
    if (!refs || !tmp || (check_dups && !table)) {
        PyMem_RawFree(refs); PyMem_RawFree(tmp); PyMem_RawFree(table);
        chunks_release(&ch);
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        return PyErr_NoMemory();
    }
    int64_t found = -1;
    Py_BEGIN_ALLOW_THREADS
    /* Segment by segment: its ids' references, the duplicate scan, the sort. On a duplicate the segments
       sorted so far are left as they are (the caller keeps nothing of out then). */
    for (Py_ssize_t s = seg_begin; found < 0 && s < seg_end; s++) {
        int64_t a = off[s], k = off[s + 1] - off[s];
        chunks_refs(&ch, a, a + k, refs);
        if (check_dups && k >= 2) {
            size_t m = 8;
            while (m < (size_t)k * 2) m <<= 1;
            for (size_t i = 0; i < m; i++) table[i] = -1;
            for (int64_t r = a; r < a + k && found < 0; r++) {
                const IdRef *x = &refs[r - a];
                size_t i = (size_t)fnv1a(x->p, x->n) & (m - 1);
                while (table[i] >= 0) {
                    const IdRef *y = &refs[table[i] - a];
                    if (y->n == x->n && memcmp(y->p, x->p, (size_t)x->n) == 0) { found = r; break; }
                    i = (i + 1) & (m - 1);
                }
                if (found < 0) table[i] = r;
            }
            if (found >= 0) break;
        }
        for (int64_t i = 0; i < k; i++) out[a + i] = a + i;
        sort_refs_stable(v, refs, a, out + a, tmp, k);
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(refs); PyMem_RawFree(tmp); PyMem_RawFree(table);
    chunks_release(&ch);
    for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
    return PyLong_FromLongLong(found);
}

static PyObject *gather_chunks(PyObject *self, PyObject *args) {
    PyObject *objs[3], *offs, *datas;
    if (!PyArg_ParseTuple(args, "OOOOO", &offs, &datas, &objs[0], &objs[1], &objs[2])) return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, b, 3, 1) < 0) return NULL;
    ChunkIds ch;
    if (chunks_get(offs, datas, &ch) < 0) {
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        return NULL;
    }
    const int64_t *perm = (const int64_t *)b[0].buf;
    int64_t *oo = (int64_t *)b[1].buf;
    unsigned char *od = (unsigned char *)b[2].buf;
    Py_ssize_t k = b[0].len / 8, rows = ch.base[ch.n], cap = b[2].len;
    int ok = b[1].len / 8 >= k + 1;
    /* Row -> chunk through a table of chunk starts (few chunks: a short scan per row). */
    int64_t total = 0;
    for (Py_ssize_t i = 0; ok && i < k; i++) {
        int64_t r = perm[i];
        if (r < 0 || r >= rows) { ok = 0; break; }
        Py_ssize_t c = 0;
        while (ch.base[c + 1] <= r) c++;
        const int64_t *o = (const int64_t *)ch.off[c].buf;
        total += o[r - ch.base[c] + 1] - o[r - ch.base[c]];
    }
    if (!ok || total > cap) {
        chunks_release(&ch);
        for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
        PyErr_SetString(PyExc_ValueError, "gather_chunks: a row out of range or an output too small");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    int64_t at = 0;
    oo[0] = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        int64_t r = perm[i];
        Py_ssize_t c = 0;
        while (ch.base[c + 1] <= r) c++;
        const int64_t *o = (const int64_t *)ch.off[c].buf;
        int64_t j = r - ch.base[c], len = o[j + 1] - o[j];
        memcpy(od + at, (const unsigned char *)ch.data[c].buf + o[j], (size_t)len);
        at += len;
        oo[i + 1] = at;
    }
    Py_END_ALLOW_THREADS
    chunks_release(&ch);
    for (int j = 0; j < 3; j++) PyBuffer_Release(&b[j]);
    Py_RETURN_NONE;
}

/* blank_line_head(data) -> int
 *     The first line of data (bytes) that starts with a line feed (an empty line) or with a blank (space, tab,
 *     CR, VT, FF): the offset of its first byte, or -1. The line after a final line feed is not a line. One memchr
 *     per line; GIL released. The trec_eval drop-in looks at such a line in Python (judgment_lines). */
static int blank_byte(unsigned char c) { return c == '\n' || c == ' ' || (c >= '\t' && c <= '\r'); }

static PyObject *blank_line_head(PyObject *self, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b)) return NULL;
    const unsigned char *p = (const unsigned char *)b.buf;
    Py_ssize_t n = b.len, found = -1;
    Py_BEGIN_ALLOW_THREADS
    if (n > 0 && blank_byte(p[0])) found = 0;
    Py_ssize_t at = 0;
    while (found < 0 && at < n) {
        const unsigned char *nl = (const unsigned char *)memchr(p + at, '\n', (size_t)(n - at));
        if (nl == NULL) break;
        at = (Py_ssize_t)(nl - p) + 1;
        if (at < n && blank_byte(p[at])) found = at;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return PyLong_FromSsize_t(found);
}

static PyObject *features(PyObject *self, PyObject *unused) {
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
#if defined(__SANITIZE_ADDRESS__)
    PyObject *asan = Py_True;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    PyObject *asan = Py_True;
#else
    PyObject *asan = Py_False;
#endif
#else
    PyObject *asan = Py_False;
#endif
    if (PyDict_SetItemString(d, "address_sanitizer", asan) < 0) { Py_DECREF(d); return NULL; }
    return d;
}

static PyMethodDef methods[] = {
    {"first_duplicate_in_segments", first_duplicate_in_segments, METH_VARARGS,
     "First row whose string equals an earlier row's of its segment, or -1."},
    {"pytrec_join", pytrec_join, METH_VARARGS, "pytrec_eval fast path: judged ranks of dict runs."},
    {"pytrec_qrels", pytrec_qrels, METH_VARARGS, "pytrec_eval fast path: qrels dicts copied and read."},
    {"nested_dicts", nested_dicts, METH_VARARGS, "{qid: {name: value}} from a 2-D float64 array."},
    {"sort_segments_trec", sort_segments_trec, METH_VARARGS, "trec_eval's rank order (score, id descending) within segments."},
    {"rank_order_chunks", rank_order_chunks, METH_VARARGS,
     "trec_eval's rank order within segments, ids read from chunks; optionally the first duplicate."},
    {"gather_chunks", gather_chunks, METH_VARARGS, "Strings of the given rows, read from chunks, one after the other."},
    {"trec_lines", trec_lines, METH_VARARGS, "trec_eval -q's lines (heads, query ids, %6.4f values, texts)."},
    {"blank_line_head", blank_line_head, METH_VARARGS,
     "Offset of the first line that is empty or starts with a blank, or -1."},
    {"features", features, METH_NOARGS, "What this build has: address_sanitizer (bool)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups",
                                    "The drop-ins' C helpers (pytrec_eval's fast path, trec_eval's order and output).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
