/* Compiled fast paths for the log pipeline's per-line work (sgwatch.core._scan).

Each function does exactly what its pure-Python counterpart does, or declines
(returns None) and leaves the input to that counterpart: the Python code stays
the reference, and tests compare the two (tests/unit/test_compiled.py).
Python callers: core/linesplit.py (plain_span), engines/sglang/parse.py
(serving_run, fields_2dp,
access_paths), core/ratecounts.py (Cents).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* -- plain_span -------------------------------------------------------- */

enum { PLAIN, NEWLINE, OPEN, CLOSE, OTHER };
static unsigned char byte_class[256];

static void init_byte_class(void) {
    for (int b = 0; b < 256; b++)
        byte_class[b] = (b >= 0x20 && b < 0x7F) || b == '\t' ? PLAIN : OTHER;
    byte_class['\n'] = NEWLINE;
    byte_class['['] = OPEN;
    byte_class[']'] = CLOSE;
}

/* `\d{4}-` at p: what a glued record's stamp starts with after `[` or `]`. */
static int stamp_at(const unsigned char *p, const unsigned char *end) {
    if (end - p < 5)
        return 0;
    for (int i = 0; i < 4; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return p[4] == '-';
}

/* Word-at-a-time tests (exact as booleans): some byte is zero, is < n. */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#define HAS_ZERO(w) (((w) - ONES) & ~(w) & HIGHS)
#define HAS_LESS(w, n) (((w) - ONES * (n)) & ~(w) & HIGHS)

static PyObject *ascii_str(const unsigned char *p, Py_ssize_t n) {
    PyObject *s = PyUnicode_New(n, 127);
    if (s != NULL)
        memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
    return s;
}

PyDoc_STRVAR(plain_span_doc,
"plain_span(chunk, max_line) -> (first, lines, last) | None\n\n"
"The offsets of the chunk's first and last newline and the lines between\n"
"them, when the chunk holds printable ASCII, tabs and newlines only, and\n"
"the lines after the first need no work\n"
"from LineSplitter: none longer than max_line (nor the text after the last\n"
"newline), none with a `[` or `]` before a date inside it (a record glued to\n"
"another). Else None: the chunk takes the general path.");

static PyObject *plain_span(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *max_obj;
    if (!PyArg_ParseTuple(args, "y*O!", &buf, &PyLong_Type, &max_obj))
        return NULL;
    int overflow;
    long long max_ll = PyLong_AsLongLongAndOverflow(max_obj, &overflow);
    Py_ssize_t max_line = overflow > 0 ? PY_SSIZE_T_MAX
                          : overflow < 0 ? -1
                                         : (Py_ssize_t)max_ll; /* no cap / no line fits */
    const unsigned char *data = buf.buf, *end = data + buf.len, *p = data;
    const unsigned char *first = NULL, *line = NULL; /* line: start of the current one */
    for (;;) {
        /* Skip words of plain bytes other than `[`, `]`; test the rest a byte at a time. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if ((w & HIGHS) | HAS_LESS(w, 0x20) | HAS_ZERO(w ^ (ONES * 0x7F)) |
                HAS_ZERO(w ^ (ONES * '[')) | HAS_ZERO(w ^ (ONES * ']')))
                break;
            p += 8;
        }
        if (p == end)
            break;
        const unsigned char *stop = end - p >= 8 ? p + 8 : end;
        for (; p < stop; p++) {
            switch (byte_class[*p]) {
            case PLAIN:
                break;
            case NEWLINE:
                if (first == NULL)
                    first = p;
                else if (p - line > max_line)
                    goto decline;
                line = p + 1;
                break;
            case OPEN:
                if (line != NULL && p > line && stamp_at(p + 1, end))
                    goto decline;
                break;
            case CLOSE:
                if (line != NULL && stamp_at(p + 1, end))
                    goto decline;
                break;
            default:
                goto decline;
            }
        }
    }
    if (first == NULL || end - line > max_line)
        goto decline;
    const unsigned char *last = line - 1;
    PyObject *lines = PyList_New(0);
    for (p = first + 1; lines != NULL && p <= last;) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(last + 1 - p));
        PyObject *s = ascii_str(p, nl - p);
        if (s == NULL || PyList_Append(lines, s) < 0)
            Py_CLEAR(lines);
        Py_XDECREF(s);
        p = nl + 1;
    }
    PyBuffer_Release(&buf);
    return lines == NULL ? NULL : Py_BuildValue("(nNn)", first - data, lines, last - data);
decline:
    PyBuffer_Release(&buf);
    Py_RETURN_NONE;
}

/* -- lines -> spans ---------------------------------------------------- */

/* Python's `\s`, `\w`, `\d` on ASCII text. */
static int is_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1C && c <= 0x1F);
}
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_word(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* Finds a span [*a, *b) in a line of `len` ASCII bytes, or returns 0. */
typedef int (*span_finder)(const unsigned char *s, Py_ssize_t len, void *ctx,
                           const unsigned char **a, const unsigned char **b);

/* (the spans found, in order; the indices of the lines without one), or None
   when a line is not ASCII: what fields_2dp and access_paths return. */
static PyObject *spans_or_missing(PyObject *lines, span_finder find, void *ctx) {
    PyObject *spans = PyList_New(0), *missing = PyList_New(0);
    if (spans == NULL || missing == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines); i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyUnicode_Check(line) || PyUnicode_READY(line) < 0 || !PyUnicode_IS_ASCII(line)) {
            PyErr_Clear();
            Py_DECREF(spans);
            Py_DECREF(missing);
            Py_RETURN_NONE;
        }
        const unsigned char *a, *b;
        int found = find(PyUnicode_1BYTE_DATA(line), PyUnicode_GET_LENGTH(line), ctx, &a, &b);
        PyObject *item = found ? ascii_str(a, b - a) : PyLong_FromSsize_t(i);
        if (item == NULL || PyList_Append(found ? spans : missing, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
    }
    return Py_BuildValue("(NN)", spans, missing);
fail:
    Py_XDECREF(spans);
    Py_XDECREF(missing);
    return NULL;
}

/* -- fields_2dp -------------------------------------------------------- */

/* The key's byte that is rarest in a sample line: memchr for it skips most of
   a line, where memmem costs ~100 ns a short line. */
static Py_ssize_t anchor_of(const char *k, Py_ssize_t klen, const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t counts[256] = {0}, best = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        counts[s[i]]++;
    for (Py_ssize_t j = 1; j < klen; j++)
        if (counts[(unsigned char)k[j]] < counts[(unsigned char)k[best]])
            best = j;
    return best;
}

/* The first k in s, found by its byte at `anchor`. */
static const unsigned char *find_key(const unsigned char *s, Py_ssize_t len, const char *k,
                                     Py_ssize_t klen, Py_ssize_t anchor) {
    if (len < klen)
        return NULL;
    const unsigned char *p = s + anchor, *last = s + (len - klen) + anchor;
    while (p <= last && (p = memchr(p, k[anchor], (size_t)(last - p + 1))) != NULL) {
        if (memcmp(p - anchor, k, (size_t)klen) == 0)
            return p - anchor;
        p++;
    }
    return NULL;
}

typedef struct {
    const char *key;
    Py_ssize_t len, anchor; /* anchor: -1 until the first line sets it */
} Key;

/* parse._field_2dp_text: `\d+\.\d\d` not followed by a digit or `.`, right
   after the first key. */
static int field_2dp(const unsigned char *s, Py_ssize_t len, void *ctx,
                     const unsigned char **a, const unsigned char **b) {
    Key *k = ctx;
    if (k->anchor < 0)
        k->anchor = k->len ? anchor_of(k->key, k->len, s, len) : 0;
    const unsigned char *at = k->len ? find_key(s, len, k->key, k->len, k->anchor) : s;
    if (at == NULL)
        return 0;
    const unsigned char *p = *a = at + k->len, *end = s + len;
    while (p < end && is_digit(*p))
        p++;
    if (p == *a || end - p < 3 || p[0] != '.' || !is_digit(p[1]) || !is_digit(p[2]))
        return 0;
    *b = p + 3;
    return *b == end || !(is_digit(**b) || **b == '.');
}

PyDoc_STRVAR(fields_2dp_doc,
"fields_2dp(lines, key) -> (fields, missing) | None\n\n"
"The two-decimal number right after the first `key` of each line\n"
"(`\\d+\\.\\d\\d` not followed by a digit or `.`: parse._field_2dp_text),\n"
"in order, and the indices of the lines without one. None when a line or\n"
"the key is not ASCII.");

static PyObject *fields_2dp(PyObject *self, PyObject *args) {
    PyObject *lines, *key;
    if (!PyArg_ParseTuple(args, "O!U", &PyList_Type, &lines, &key))
        return NULL;
    if (PyUnicode_READY(key) < 0 || !PyUnicode_IS_ASCII(key)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Key k = {(const char *)PyUnicode_1BYTE_DATA(key), PyUnicode_GET_LENGTH(key), -1};
    return spans_or_missing(lines, field_2dp, &k);
}

/* -- access_paths ------------------------------------------------------ */

/* parse._ACCESS, `(\S+) - "(\w+) (\S+) HTTP/[\d.]+" (\d{3})`, matched at
   *at: the path's span. No backtracking can matter: each run ends at a
   character its class does not hold, which the next part needs. */
static int access_path(const unsigned char *s, Py_ssize_t len, void *at,
                       const unsigned char **path, const unsigned char **path_end) {
    Py_ssize_t from = *(Py_ssize_t *)at;
    if (from > len)
        return 0;
    const unsigned char *p = s + from, *end = s + len, *q = p;
    while (p < end && !is_space(*p))
        p++;
    if (p == q || end - p < 4 || memcmp(p, " - \"", 4) != 0)
        return 0;
    q = p += 4;
    while (p < end && is_word(*p))
        p++;
    if (p == q || p == end || *p++ != ' ')
        return 0;
    *path = p;
    while (p < end && !is_space(*p))
        p++;
    if (p == *path || end - p < 6 || memcmp(p, " HTTP/", 6) != 0)
        return 0;
    *path_end = p;
    q = p += 6;
    while (p < end && (is_digit(*p) || *p == '.'))
        p++;
    return p > q && end - p >= 5 && p[0] == '"' && p[1] == ' ' && is_digit(p[2]) &&
           is_digit(p[3]) && is_digit(p[4]);
}

PyDoc_STRVAR(access_paths_doc,
"access_paths(lines, at) -> (paths, missing) | None\n\n"
"The path of each line that is an access line from `at` on (parse._ACCESS\n"
"matched there), in order, and the indices of the lines that are not. None\n"
"when a line is not ASCII.");

static PyObject *access_paths(PyObject *self, PyObject *args) {
    PyObject *lines;
    Py_ssize_t at;
    if (!PyArg_ParseTuple(args, "O!n", &PyList_Type, &lines, &at))
        return NULL;
    if (at < 0) {
        PyErr_SetString(PyExc_ValueError, "at must be >= 0");
        return NULL;
    }
    return spans_or_missing(lines, access_path, &at);
}

/* -- serving_run ------------------------------------------------------- */

enum { OTHER_LINE, DECODE, PREFILL, ACCESS };

static int starts(const char *s, Py_ssize_t len, Py_ssize_t at, const char *lit, Py_ssize_t n) {
    return at >= 0 && len - at >= n && memcmp(s + at, lit, (size_t)n) == 0;
}

/* parse._DATED at the start of s: `[YYYY-MM-DD HH:MM:SS`, optional `.` and
   1-6 digits, rank tags ` [A-Z][A-Z_]*\d+`, then `] `. Where the message
   starts, or 0. */
static Py_ssize_t dated_prefix(const char *s, Py_ssize_t len) {
    static const char shape[] = "[dddd-dd-dd dd:dd:dd";
    if (len < 22)
        return 0;
    for (Py_ssize_t i = 0; i < 20; i++)
        if (shape[i] == 'd' ? !is_digit((unsigned char)s[i]) : s[i] != shape[i])
            return 0;
    Py_ssize_t p = 20;
    if (s[p] == '.') {
        Py_ssize_t q = ++p;
        while (p < len && is_digit((unsigned char)s[p]) && p - q < 6)
            p++;
        if (p == q)
            return 0;
    }
    while (p < len && s[p] == ' ') { /* a rank tag */
        p++;
        if (p >= len || s[p] < 'A' || s[p] > 'Z')
            return 0;
        while (p < len && ((s[p] >= 'A' && s[p] <= 'Z') || s[p] == '_'))
            p++;
        Py_ssize_t q = p;
        while (p < len && is_digit((unsigned char)s[p]))
            p++;
        if (p == q)
            return 0;
    }
    return len - p >= 2 && s[p] == ']' && s[p + 1] == ' ' ? p + 2 : 0;
}

/* The full test of Parser.parse_lines' sorting loop: a batch line by the
   label after a dated prefix, an access line by uvicorn's `INFO:     ` and a
   client address right after a stamp without milliseconds or rank tags. */
static int line_kind(PyObject *line) {
    if (!PyUnicode_Check(line) || PyUnicode_READY(line) < 0 ||
        PyUnicode_KIND(line) != PyUnicode_1BYTE_KIND) {
        PyErr_Clear();
        return OTHER_LINE;
    }
    const char *s = (const char *)PyUnicode_1BYTE_DATA(line);
    Py_ssize_t len = PyUnicode_GET_LENGTH(line), k = dated_prefix(s, len);
    if (k == 0)
        return OTHER_LINE;
    if (starts(s, len, k, "Decode batch", 12))
        return DECODE;
    if (starts(s, len, k, "Prefill batch", 13))
        return PREFILL;
    if (k == 22 && len > 32 && starts(s, len, k, "INFO:     ", 10) &&
        (is_digit((unsigned char)s[32]) || s[32] == ':' || s[32] == '['))
        return ACCESS;
    return OTHER_LINE;
}

PyDoc_STRVAR(serving_run_doc,
"serving_run(lines, start, last) -> (end, decode, prefill, access, before, first_batch, last)\n\n"
"Read lines[start:] while they are serving lines (Parser._serving_run).");

static PyObject *serving_run(PyObject *self, PyObject *args) {
    PyObject *lines, *last;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "O!nO", &PyList_Type, &lines, &i, &last))
        return NULL;
    if (i < 0) {
        PyErr_SetString(PyExc_ValueError, "start must be >= 0");
        return NULL;
    }
    PyObject *decode = PyList_New(0), *access = PyList_New(0), *before = PyList_New(0);
    PyObject *first_batch = NULL;
    Py_ssize_t prefill = 0, n = PyList_GET_SIZE(lines);
    if (decode == NULL || access == NULL || before == NULL)
        goto fail;
    for (; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        int kind = line_kind(line);
        if (kind == OTHER_LINE)
            break;
        if (kind == ACCESS) {
            if (PyList_Append(access, line) < 0 || PyList_Append(before, last) < 0)
                goto fail;
        } else {
            if (kind == DECODE ? PyList_Append(decode, line) < 0 : (prefill++, 0))
                goto fail;
            if (first_batch == NULL)
                first_batch = line;
        }
        last = line;
    }
    if (first_batch == NULL)
        first_batch = PyUnicode_New(0, 0);
    else
        Py_INCREF(first_batch);
    if (first_batch == NULL)
        goto fail;
    return Py_BuildValue("(nNnNNNO)", i, decode, prefill, access, before, first_batch, last);
fail:
    Py_XDECREF(decode);
    Py_XDECREF(access);
    Py_XDECREF(before);
    return NULL;
}

/* -- Cents: counts of two-decimal values ------------------------------- */

/* Counts by value in cents, in pages of PAGE consecutive values allocated
   when first touched: memory follows the range of the values, not their
   number, and a rank is found by walking page totals, then one page. */
#define PAGE_BITS 10
#define PAGE (1 << PAGE_BITS)
#define LIMIT (1LL << 30) /* cents; above: the caller counts them */

typedef struct {
    PyObject_HEAD
    uint64_t **pages;
    uint64_t *page_totals;
    Py_ssize_t n_pages;
    uint64_t total;
    long long max;
} Cents;

static int cents_grow(Cents *c, Py_ssize_t page) {
    Py_ssize_t n = c->n_pages ? c->n_pages : 16;
    while (n <= page)
        n *= 2;
    uint64_t **pages = PyMem_Realloc(c->pages, (size_t)n * sizeof *pages);
    if (pages == NULL)
        return -1;
    c->pages = pages;
    uint64_t *totals = PyMem_Realloc(c->page_totals, (size_t)n * sizeof *totals);
    if (totals == NULL)
        return -1;
    c->page_totals = totals;
    memset(pages + c->n_pages, 0, (size_t)(n - c->n_pages) * sizeof *pages);
    memset(totals + c->n_pages, 0, (size_t)(n - c->n_pages) * sizeof *totals);
    c->n_pages = n;
    return 0;
}

static int cents_count(Cents *c, long long v, uint64_t times) {
    Py_ssize_t page = (Py_ssize_t)(v >> PAGE_BITS);
    if (page >= c->n_pages && cents_grow(c, page) < 0)
        return -1;
    if (c->pages[page] == NULL) {
        c->pages[page] = PyMem_Calloc(PAGE, sizeof(uint64_t));
        if (c->pages[page] == NULL)
            return -1;
    }
    c->pages[page][v & (PAGE - 1)] += times;
    c->page_totals[page] += times;
    c->total += times;
    if (v > c->max)
        c->max = v;
    return 0;
}

/* `\d+\.\d\d` -> cents, or -1 (another shape, or LIMIT and above). */
static long long parse_cents(PyObject *text) {
    if (!PyUnicode_Check(text) || PyUnicode_READY(text) < 0 || !PyUnicode_IS_ASCII(text)) {
        PyErr_Clear();
        return -1;
    }
    const unsigned char *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if (len < 4 || s[len - 3] != '.')
        return -1;
    long long v = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        if (i == len - 3)
            continue;
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v >= LIMIT)
            return -1;
    }
    return v;
}

static PyObject *cents_add_texts(Cents *c, PyObject *texts) {
    if (!PyList_Check(texts)) {
        PyErr_SetString(PyExc_TypeError, "add_texts() takes a list");
        return NULL;
    }
    PyObject *left = PyList_New(0);
    if (left == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(texts); i++) {
        PyObject *t = PyList_GET_ITEM(texts, i);
        long long v = parse_cents(t);
        if ((v < 0 ? PyList_Append(left, t) : cents_count(c, v, 1)) < 0) {
            Py_DECREF(left);
            return PyErr_Occurred() ? NULL : PyErr_NoMemory();
        }
    }
    return left;
}

static PyObject *cents_add(Cents *c, PyObject *arg) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (overflow)
        Py_RETURN_FALSE;
    if (v < 0 || v >= LIMIT)
        Py_RETURN_FALSE;
    if (cents_count(c, v, 1) < 0)
        return PyErr_NoMemory();
    Py_RETURN_TRUE;
}

static PyObject *cents_select(Cents *c, PyObject *arg) {
    Py_ssize_t rank = PyLong_AsSsize_t(arg);
    if (rank == -1 && PyErr_Occurred())
        return NULL;
    if (rank < 0 || (uint64_t)rank >= c->total) {
        PyErr_SetString(PyExc_IndexError, "rank out of range");
        return NULL;
    }
    uint64_t seen = 0;
    Py_ssize_t page = 0;
    while (seen + c->page_totals[page] <= (uint64_t)rank)
        seen += c->page_totals[page++];
    const uint64_t *counts = c->pages[page];
    Py_ssize_t i = 0;
    while (seen + counts[i] <= (uint64_t)rank)
        seen += counts[i++];
    return PyLong_FromLongLong(((long long)page << PAGE_BITS) + i);
}

static PyObject *cents_items(Cents *c, PyObject *unused) {
    PyObject *out = PyList_New(0);
    for (Py_ssize_t page = 0; out != NULL && page < c->n_pages; page++) {
        for (Py_ssize_t i = 0; c->page_totals[page] && i < PAGE; i++) {
            uint64_t n = c->pages[page][i];
            if (n == 0)
                continue;
            PyObject *item = Py_BuildValue("(LK)", ((long long)page << PAGE_BITS) + i,
                                           (unsigned long long)n);
            if (item == NULL || PyList_Append(out, item) < 0)
                Py_CLEAR(out);
            Py_XDECREF(item);
            if (out == NULL)
                break;
        }
    }
    return out;
}

static PyObject *cents_get_total(Cents *c, void *closure) {
    return PyLong_FromUnsignedLongLong(c->total);
}

static PyObject *cents_get_max(Cents *c, void *closure) {
    if (c->total == 0)
        Py_RETURN_NONE;
    return PyLong_FromLongLong(c->max);
}

static void cents_dealloc(Cents *c) {
    for (Py_ssize_t i = 0; i < c->n_pages; i++)
        PyMem_Free(c->pages[i]);
    PyMem_Free(c->pages);
    PyMem_Free(c->page_totals);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef cents_methods[] = {
    {"add_texts", (PyCFunction)cents_add_texts, METH_O,
     "Count each `\\d+\\.\\d\\d` text; return those not counted (other shapes, too large)."},
    {"add", (PyCFunction)cents_add, METH_O,
     "Count one value given in cents; False (not counted) when out of range."},
    {"items", (PyCFunction)cents_items, METH_NOARGS,
     "(value in cents, count) of every value counted, smallest first."},
    {"select", (PyCFunction)cents_select, METH_O,
     "The value (cents) of the given rank, 0 = smallest."},
    {NULL},
};

static PyGetSetDef cents_getset[] = {
    {"total", (getter)cents_get_total, NULL, "values counted", NULL},
    {"max", (getter)cents_get_max, NULL, "largest value counted (cents), or None", NULL},
    {NULL},
};

static PyTypeObject CentsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sgwatch.core._scan.Cents",
    .tp_doc = PyDoc_STR("Counts of values in cents, 0 <= v < 2**30, with rank selection."),
    .tp_basicsize = sizeof(Cents),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)cents_dealloc,
    .tp_methods = cents_methods,
    .tp_getset = cents_getset,
};

/* -- module ------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"plain_span", plain_span, METH_VARARGS, plain_span_doc},
    {"fields_2dp", fields_2dp, METH_VARARGS, fields_2dp_doc},
    {"serving_run", serving_run, METH_VARARGS, serving_run_doc},
    {"access_paths", access_paths, METH_VARARGS, access_paths_doc},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "sgwatch.core._scan", "Compiled fast paths for the log pipeline.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__scan(void) {
    init_byte_class();
    if (PyType_Ready(&CentsType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Cents", (PyObject *)&CentsType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
