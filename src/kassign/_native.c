/* kassign._native: the dict API's two edges in C, where Python objects come and go by the thousand.
 *
 * read_members(doc, pair_type) reads a scenario's "members" object column by column, like
 * kassign.groups.scenario._members_at_once, for the plainest shape only: exact dicts, exact str names, exact
 * ints, lists or tuples. It returns None for anything else (a str or int subclass, a numpy integer, an
 * unknown field, a missing "topics", a number outside Java's int range ...), and the Python readers
 * then decide, so every error message still comes from one place. What it accepts it reads to the
 * same columns as the Python readers (tests/groups/test_scenario_members.py runs every near miss and
 * generated documents through all of them), and while each member id is at hand, three things the Python side
 * would otherwise walk the ids again for: each id's Java String.hashCode(), whether every id and owned topic is
 * ASCII, and whether the ids come in ascending order. Given topic_numbers ({name: number}), each distinct
 * subscription's names are numbered by it as the subscription is first read, while its strings are at hand.
 *
 * Real input (JSON, a live describe) gives every member a topics list of its own strings, so a member's list
 * is first compared text by text with the subscription numbered last (no hash: a fresh string has none yet,
 * and hashing a million of them is most of the cost); only a list that differs is hashed and looked up.
 *
 * member_pairs(names, bounds, topic, partition, topic_names, flat, pairs, pair_type=None) builds the dict
 * API's result {names[i]: [(topic, partition), ...]} from the grouped integer columns of kassign.groups.flat:
 * member i's rows are bounds[i] .. bounds[i+1]-1. Given a list of kept pairs (one tuple per flat id of a
 * small layout) and the rows' flat ids, it shares those tuples; otherwise it makes one tuple per row (or
 * one pair_type, e.g. TopicPartition for the assignor classes) from the shared topic names and one int
 * object per partition number. A tuple of a str and an int cannot be part of a
 * reference cycle, so each new tuple is untracked by the cyclic collector at once, as CPython's own
 * collector does when it first examines such a tuple: a million of them are never traversed.
 *
 * owner_pairs and shared_pairs build the same dict straight from an assignment's arrays (an owner per partition,
 * or a share group's (member, partition) pairs), where kassign.groups.flat would first group them into those
 * columns; see each one's comment.
 *
 * A build of many new pairs maps the memory for them in huge pages (see "Arenas for a large result"):
 * on a virtual machine faulting 4 KiB pages in one by one was half the time of a million-pair build.
 *
 * Hot loops work on the int64 columns (buffers, read-only) and borrowed references; every new object is
 * owned by exactly one container before the next allocation, so an error at any point frees all.
 */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_column.h"
#if defined(__linux__)
#include <dlfcn.h>
#include <sys/mman.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch((const void *)(address))
#else
#define PREFETCH(address) ((void)(address))
#endif

#define JAVA_INT_MIN (-2147483647LL - 1)

static PyObject *TOPICS, *OWNED, *GENERATION, *RACK, *INSTANCE_ID, *MINUS_ONE;

/* ---------------------------------------------------------------------------------------------- */
/* read_members                                                                                    */

/* Outcome of reading one part of an entry: read, not the plain shape (decline), or a Python error. */
enum { READ = 0, DECLINE = 1, FAILED = -1 };

/* Distinct values numbered in order of first appearance: `values[n]` is the value numbered n. */
typedef struct {
    PyObject *values; /* list */
    PyObject *number_of; /* dict: value -> its number */
} Numbering;

/* The number of `value`, a new one (and `value` added) if it has none yet. */
static int number_of(Numbering *numbering, PyObject *value, int64_t *number) {
    PyObject *known = PyDict_GetItemWithError(numbering->number_of, value);
    if (known != NULL) {
        *number = PyLong_AsLongLong(known);
        return READ;
    }
    if (PyErr_Occurred())
        return FAILED;
    *number = PyList_GET_SIZE(numbering->values);
    PyObject *boxed = PyLong_FromLongLong(*number);
    int failed = boxed == NULL || PyDict_SetItem(numbering->number_of, value, boxed) < 0 ||
                 PyList_Append(numbering->values, value) < 0;
    Py_XDECREF(boxed);
    return failed ? FAILED : READ;
}

/* The distinct topic lists, numbered by content (as tuples) in order of first appearance. */
typedef struct {
    Numbering lists;
    PyObject *last;    /* the list object numbered last (a strong reference), or NULL */
    int64_t last_number;
    PyObject *topic_numbers; /* borrowed: {topic name: its number}, or NULL */
    Column start, codes;     /* with topic_numbers: list n's names numbered at codes[start[n] .. start[n+1]-1] */
} Subscriptions;

/* A newly numbered list's names as topic numbers (-1: a name that is not a topic), while its strings are hot. */
static int code_names(Subscriptions *subs, PyObject *key) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
        PyObject *known = PyDict_GetItemWithError(subs->topic_numbers, PyTuple_GET_ITEM(key, i));
        if (known == NULL && PyErr_Occurred())
            return FAILED;
        if (column_push(&subs->codes, known == NULL ? -1 : PyLong_AsLongLong(known)) < 0)
            return FAILED;
    }
    return column_push(&subs->start, subs->codes.length) < 0 ? FAILED : READ;
}

/* Whether two exact str objects hold the same text (no hash needed: a fresh string has none yet). */
/* Whether `size` bytes at `x` and at `y` are the same. Topic names are short: up to 16 bytes they are compared as
   two words each (overlapping where shorter, never read past `size`), not by a call of memcmp per name. */
static inline int same_bytes(const void *x, const void *y, size_t size) {
    const unsigned char *p = x, *q = y;
    if (size >= 8 && size <= 16) {
        uint64_t p0, q0, p1, q1;
        memcpy(&p0, p, 8);
        memcpy(&q0, q, 8);
        memcpy(&p1, p + size - 8, 8);
        memcpy(&q1, q + size - 8, 8);
        return ((p0 ^ q0) | (p1 ^ q1)) == 0;
    }
    if (size >= 4 && size < 8) {
        uint32_t p0, q0, p1, q1;
        memcpy(&p0, p, 4);
        memcpy(&q0, q, 4);
        memcpy(&p1, p + size - 4, 4);
        memcpy(&q1, q + size - 4, 4);
        return ((p0 ^ q0) | (p1 ^ q1)) == 0;
    }
    if (size < 4) {
        for (size_t i = 0; i < size; i++)
            if (p[i] != q[i])
                return 0;
        return 1;
    }
    return memcmp(p, q, size) == 0;
}

static int same_text(PyObject *a, PyObject *b) {
    if (a == b)
        return 1;
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(a) || !PyUnicode_IS_READY(b)) /* a legacy string: Python compares it */
        return PyUnicode_Compare(a, b) == 0;
#endif
    Py_ssize_t length = PyUnicode_GET_LENGTH(a);
    int kind = PyUnicode_KIND(a);
    return length == PyUnicode_GET_LENGTH(b) && kind == PyUnicode_KIND(b) &&
           same_bytes(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)length * (size_t)kind);
}

/* The names this far ahead in a member's list are asked for early: each is a string object of its own that JSON
   just made, out of the nearest caches, and comparing them one after another otherwise waits for each in turn
   (a million names: read_members 9.9 -> 8.4 ms of CPU time; 4 to 32 ahead measured alike). */
#define SAME_NAMES_AHEAD 8

/* Whether the list or tuple `topics` holds, item by item, exact str objects with the texts of `key` (a tuple of
   exact str, numbered already): then the dict would number it as `key`, whose hash and equality are its texts'. */
static int same_names(PyObject *topics, PyObject *key) {
    Py_ssize_t count = PySequence_Fast_GET_SIZE(topics);
    if (count != PyTuple_GET_SIZE(key))
        return 0;
    PyObject **items = PySequence_Fast_ITEMS(topics);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = items[i];
        if (i + SAME_NAMES_AHEAD < count)
            PREFETCH(items[i + SAME_NAMES_AHEAD]);
        if (!PyUnicode_CheckExact(item) || !same_text(item, PyTuple_GET_ITEM(key, i)))
            return 0;
    }
    return 1;
}

/* Java's String.hashCode() of an exact str, unsigned 32-bit: over its UTF-16 code units (a character beyond
   U+FFFF is two of them; a lone surrogate is its own unit, as kassign.core.javaorder.java_string_hashes has it). */
static int64_t java_string_hash(PyObject *text) {
    uint32_t hash = 0;
    const Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *units = data;
        for (Py_ssize_t i = 0; i < length; i++)
            hash = 31 * hash + units[i];
    } else {
        for (Py_ssize_t i = 0; i < length; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c >= 0x10000) {
                c -= 0x10000;
                hash = 31 * hash + (0xD800 + (c >> 10));
                c = 0xDC00 + (c & 0x3FF);
            }
            hash = 31 * hash + c;
        }
    }
    return (int64_t)hash;
}

static int subscription_number(Subscriptions *subs, PyObject *topics, int64_t *number) {
    if (topics == subs->last) {
        *number = subs->last_number;
        return READ;
    }
    if (!PyList_CheckExact(topics) && !PyTuple_CheckExact(topics))
        return DECLINE;
    /* Real input gives every member a list of its own, of strings of its own, usually the same names as the
       member before: compared text by text with that subscription, it is numbered without hashing a name. */
    if (subs->last != NULL && same_names(topics, PyList_GET_ITEM(subs->lists.values, subs->last_number))) {
        Py_INCREF(topics);
        Py_XSETREF(subs->last, topics);
        *number = subs->last_number;
        return READ;
    }
    PyObject *key = PySequence_Tuple(topics);
    if (key == NULL)
        return FAILED;
    int outcome = READ;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key) && outcome == READ; i++)
        outcome = PyUnicode_CheckExact(PyTuple_GET_ITEM(key, i)) ? READ : DECLINE;
    Py_ssize_t known = PyList_GET_SIZE(subs->lists.values);
    if (outcome == READ)
        outcome = number_of(&subs->lists, key, number);
    if (outcome == READ && subs->topic_numbers != NULL && *number == known)
        outcome = code_names(subs, key);
    Py_DECREF(key);
    if (outcome != READ)
        return outcome;
    Py_INCREF(topics);
    Py_XSETREF(subs->last, topics);
    subs->last_number = *number;
    return READ;
}

/* Slots of the owned topics' cache: a power of two, a few times the topics a group usually holds. */
#define NAME_SLOTS 512

typedef struct {
    PyObject *topics; /* list of str: each owned pair's topic */
    Numbering names;  /* the distinct owned topics, in order of first listing */
    Column start, partitions, codes; /* codes: each owned pair's topic as its number in `names` */
    int ascii;        /* whether every owned topic is ASCII */
    /* The names numbered so far, by a cheap hash of their text (borrowed from `names`, which holds them):
       a share group's target lists one partition of each of many topics, so most pairs name another topic
       than the pair before, and a fresh string would otherwise be hashed (and its hash stored in it) and
       looked up in a dict, pair by pair. */
    PyObject *slot_name[NAME_SLOTS];
    int64_t slot_code[NAME_SLOTS];
} Owned;

/* Whether a str's text can be read in place: always from Python 3.12, where strings are never "legacy". */
#if PY_VERSION_HEX < 0x030C0000
#define TEXT_READY(text) PyUnicode_IS_READY(text)
#else
#define TEXT_READY(text) 1
#endif

/* A ready str's text hashed with FNV-1a over its bytes, folded to a slot. */
static Py_ssize_t name_slot(PyObject *text) {
    const unsigned char *bytes = PyUnicode_DATA(text);
    const size_t size = (size_t)PyUnicode_GET_LENGTH(text) * (size_t)PyUnicode_KIND(text);
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ bytes[i]) * 16777619u;
    return (Py_ssize_t)((hash ^ (hash >> 15)) & (NAME_SLOTS - 1));
}

/* A whole number as kassign.groups.scenario._java_int takes it on this path: an exact int in Java's range. */
static int java_int(PyObject *value, int64_t *out) {
    if (!PyLong_CheckExact(value))
        return DECLINE;
    int overflow = 0;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || number < JAVA_INT_MIN || number > JAVA_INT_MAX)
        return DECLINE;
    *out = number;
    return READ;
}

static int read_owned(Owned *owned, PyObject *list, PyTypeObject *pair_type) {
    if (!PyList_CheckExact(list) && !PyTuple_CheckExact(list))
        return DECLINE;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(list);
    PyObject **items = PySequence_Fast_ITEMS(list);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = items[i], *topic, *partition;
        if (PyList_CheckExact(pair)) {
            if (PyList_GET_SIZE(pair) != 2)
                return DECLINE;
            topic = PyList_GET_ITEM(pair, 0);
            partition = PyList_GET_ITEM(pair, 1);
        } else if (PyTuple_CheckExact(pair) || Py_IS_TYPE(pair, pair_type)) {
            if (PyTuple_GET_SIZE(pair) != 2)
                return DECLINE;
            topic = PyTuple_GET_ITEM(pair, 0);
            partition = PyTuple_GET_ITEM(pair, 1);
        } else {
            return DECLINE;
        }
        int64_t number, code;
        if (!PyUnicode_CheckExact(topic) || java_int(partition, &number) != READ)
            return DECLINE;
        /* pairs of one topic usually follow one another: the last pair's topic needs no hash */
        Py_ssize_t listed = owned->codes.length;
        Py_ssize_t slot = -1;
        if (listed > 0 && same_text(topic, PyList_GET_ITEM(owned->topics, listed - 1))) {
            code = owned->codes.values[listed - 1];
        } else if (TEXT_READY(topic) && owned->slot_name[slot = name_slot(topic)] != NULL &&
                   same_text(topic, owned->slot_name[slot])) {
            code = owned->slot_code[slot];
        } else {
            if (number_of(&owned->names, topic, &code) != READ) /* hashing it readies a legacy string */
                return FAILED;
            owned->ascii &= PyUnicode_IS_ASCII(topic) != 0;
            if (slot >= 0) {
                owned->slot_name[slot] = PyList_GET_ITEM(owned->names.values, code);
                owned->slot_code[slot] = code;
            }
        }
        if (PyList_Append(owned->topics, topic) < 0 || column_push(&owned->partitions, number) < 0 ||
            column_push(&owned->codes, code) < 0)
            return FAILED;
    }
    return READ;
}

/* Puts `value` in place `i` of a list whose places all hold a reference already (the default at first). */
static void replace_item(PyObject *list, Py_ssize_t i, PyObject *value) {
    PyObject *old = PyList_GET_ITEM(list, i);
    Py_INCREF(value);
    PyList_SET_ITEM(list, i, value);
    Py_DECREF(old);
}

/* The entry's field `name`, if it has one, into place `i` of `column`; counts it in `fields`.
   `text`: a str or None; otherwise a whole number in Java's int range. */
static int read_field(PyObject *entry, PyObject *name, int text, PyObject *column, Py_ssize_t i, Py_ssize_t *fields) {
    PyObject *value = PyDict_GetItemWithError(entry, name);
    if (value == NULL) /* absent: the default stays in place */
        return PyErr_Occurred() ? FAILED : READ;
    int64_t unused;
    (*fields)++;
    if (text ? value != Py_None && !PyUnicode_CheckExact(value) : java_int(value, &unused) != READ)
        return DECLINE;
    replace_item(column, i, value);
    return READ;
}

/* One member's entry into the columns. */
static int read_entry(PyObject *entry, Py_ssize_t i, Subscriptions *subs, int64_t *subscription, Owned *owned,
                      PyObject *generations, PyObject *racks, PyObject *instance_ids, PyTypeObject *pair_type) {
    if (!PyDict_CheckExact(entry))
        return DECLINE;
    Py_ssize_t fields = 1;
    PyObject *value = PyDict_GetItemWithError(entry, TOPICS);
    if (value == NULL)
        return PyErr_Occurred() ? FAILED : DECLINE;
    int outcome = subscription_number(subs, value, &subscription[i]);
    if (outcome != READ)
        return outcome;
    value = PyDict_GetItemWithError(entry, OWNED);
    if (value != NULL) {
        fields++;
        if ((outcome = read_owned(owned, value, pair_type)) != READ)
            return outcome;
    } else if (PyErr_Occurred()) {
        return FAILED;
    }
    if (column_push(&owned->start, PyList_GET_SIZE(owned->topics)) < 0)
        return FAILED;
    if (fields == PyDict_GET_SIZE(entry)) /* the usual entry: the other fields are absent, their defaults in place */
        return READ;
    if ((outcome = read_field(entry, GENERATION, 0, generations, i, &fields)) != READ ||
        (outcome = read_field(entry, RACK, 1, racks, i, &fields)) != READ ||
        (outcome = read_field(entry, INSTANCE_ID, 1, instance_ids, i, &fields)) != READ)
        return outcome;
    /* a field of another name: the Python readers name it */
    return fields == PyDict_GET_SIZE(entry) ? READ : DECLINE;
}

/* A list of `count` references to `value`. */
static PyObject *repeated(PyObject *value, Py_ssize_t count) {
    PyObject *list = PyList_New(count);
    for (Py_ssize_t i = 0; list != NULL && i < count; i++) {
        Py_INCREF(value);
        PyList_SET_ITEM(list, i, value);
    }
    return list;
}

static PyObject *read_members(PyObject *module, PyObject *args) {
    PyObject *doc, *topic_numbers = Py_None;
    PyTypeObject *pair_type;
    if (!PyArg_ParseTuple(args, "OO!|O:read_members", &doc, &PyType_Type, &pair_type, &topic_numbers))
        return NULL;
    if (topic_numbers != Py_None && !PyDict_CheckExact(topic_numbers)) {
        PyErr_SetString(PyExc_TypeError, "read_members: topic_numbers must be a dict or None");
        return NULL;
    }
    if (!PyDict_CheckExact(doc))
        Py_RETURN_NONE;
    /* the keys and values as lists of their own: nothing done while reading can change what is read */
    PyObject *ids = PyDict_Keys(doc), *entries = PyDict_Values(doc);
    Py_ssize_t count = entries == NULL ? 0 : PyList_GET_SIZE(entries);
    Subscriptions subs = {{PyList_New(0), PyDict_New()}, NULL, -1, topic_numbers == Py_None ? NULL : topic_numbers,
                          {NULL, 0, 0}, {NULL, 0, 0}};
    Owned owned;
    memset(&owned, 0, sizeof owned); /* the columns empty, the slots free */
    owned.topics = PyList_New(0);
    owned.names.values = PyList_New(0);
    owned.names.number_of = PyDict_New();
    owned.ascii = 1;
    /* each field's default in every place: an entry without the field leaves it */
    PyObject *generations = repeated(MINUS_ONE, count), *racks = repeated(Py_None, count),
             *instance_ids = repeated(Py_None, count);
    int64_t *subscription = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    int64_t *id_hashes = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(int64_t));
    int ids_ascii = 1, ids_ascending = 1;
    PyObject *result = NULL;
    int outcome = FAILED;
    if (ids == NULL || entries == NULL || subs.lists.values == NULL || subs.lists.number_of == NULL ||
        owned.topics == NULL || owned.names.values == NULL || owned.names.number_of == NULL || generations == NULL ||
        racks == NULL || instance_ids == NULL)
        goto done;
    if (subscription == NULL || id_hashes == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    outcome = column_push(&owned.start, 0) < 0 || column_push(&subs.start, 0) < 0 ? FAILED : READ;
    for (Py_ssize_t i = 0; i < count && outcome == READ; i++) {
        PyObject *id = PyList_GET_ITEM(ids, i);
        if (!PyUnicode_CheckExact(id)) {
            outcome = DECLINE;
            break;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(id) < 0) { /* a legacy string (made by a deprecated C call): its data first */
            outcome = FAILED;
            break;
        }
#endif
        /* while the id is at hand: its Java hash (the coordinator's member map), whether it is ASCII (then
           UTF-8 carries it) and whether the ids come sorted (the result lists members sorted) */
        id_hashes[i] = java_string_hash(id);
        ids_ascii &= PyUnicode_IS_ASCII(id) != 0;
        if (ids_ascending && i > 0) {
            int order = PyUnicode_Compare(PyList_GET_ITEM(ids, i - 1), id);
            if (order == -1 && PyErr_Occurred()) {
                outcome = FAILED;
                break;
            }
            ids_ascending = order < 0;
        }
        outcome = read_entry(PyList_GET_ITEM(entries, i), i, &subs, subscription, &owned, generations, racks,
                             instance_ids, pair_type);
    }
    if (outcome == READ) {
        PyObject *codes = Py_None;
        if (subs.topic_numbers != NULL)
            codes = Py_BuildValue("(NN)", column_bytes(subs.start.values, subs.start.length),
                                  column_bytes(subs.codes.values, subs.codes.length));
        else
            Py_INCREF(codes);
        result = Py_BuildValue("(OONNONOOOONNOON)", ids, subs.lists.values, column_bytes(subscription, count),
                               column_bytes(owned.start.values, owned.start.length), owned.topics,
                               column_bytes(owned.partitions.values, owned.partitions.length),
                               generations, racks, instance_ids, owned.names.values,
                               column_bytes(owned.codes.values, owned.codes.length),
                               column_bytes(id_hashes, count), ids_ascii && owned.ascii ? Py_True : Py_False,
                               ids_ascending ? Py_True : Py_False, codes);
    } else if (outcome == DECLINE) {
        result = Py_NewRef(Py_None);
    }
done:
    Py_XDECREF(ids);
    Py_XDECREF(entries);
    Py_XDECREF(subs.lists.values);
    Py_XDECREF(subs.lists.number_of);
    Py_XDECREF(subs.last);
    Py_XDECREF(owned.topics);
    Py_XDECREF(owned.names.values);
    Py_XDECREF(owned.names.number_of);
    Py_XDECREF(generations);
    Py_XDECREF(racks);
    Py_XDECREF(instance_ids);
    PyMem_Free(owned.start.values);
    PyMem_Free(owned.partitions.values);
    PyMem_Free(owned.codes.values);
    PyMem_Free(subs.start.values);
    PyMem_Free(subs.codes.values);
    PyMem_Free(subscription);
    PyMem_Free(id_hashes);
    return result;
}

/* ---------------------------------------------------------------------------------------------- */
/* Arenas for a large result                                                                       */
/*
 * CPython keeps small objects in 1 MiB arenas it maps from the system as it needs them, and unmaps
 * each arena once it is empty again. A million new pairs need about 56 such arenas, and the kernel
 * then fills them 4 KiB at a time: some 15,000 page faults, each costly under a hypervisor (measured
 * here: a bare C loop making a million 2-tuples took 45 ms with 15,000 faults, 21 ms with the memory in
 * huge pages and 30 faults).
 *
 * So while member_pairs makes many pairs, and only then, the arena allocator is swapped for one that
 * maps 2 MiB-aligned chunks advised as huge pages (MADV_HUGEPAGE, as numpy does for its large
 * arrays), and hands out each chunk as two arenas. Nothing else changes: the arenas are ordinary
 * anonymous mappings of CPython's arena size, so CPython's own allocator unmaps them later like any
 * other (the kernel splits a huge page unmapped by halves); the swap lasts only while the GIL is held
 * by member_pairs, so no other thread ever allocates through it; half a chunk left unused at the end
 * is unmapped at once. Where the kernel has no transparent huge pages the advice is ignored and the
 * arenas are ordinary pages. The swap happens only when the allocator in place is CPython's own
 * (no context, and its function lives in the same binary as PyObject_Malloc): an embedding program's
 * own arena allocator is left alone, as are builds of other platforms. */

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HUGE_ARENAS 1
#define HUGE_CHUNK ((size_t)2 << 20)

typedef struct {
    PyObjectArenaAllocator python; /* the allocator in place before the swap, restored after */
    char *spare;                   /* the unused rest of the last chunk */
    size_t spare_size;
    int active;
} HugeArenas;

static HugeArenas huge_arenas;
static unsigned long long huge_arenas_served; /* arenas handed out from huge-page chunks, for the tests */

static void *huge_arena_alloc(void *ctx, size_t size) {
    if (huge_arenas.spare != NULL && huge_arenas.spare_size >= size) {
        char *arena = huge_arenas.spare;
        huge_arenas.spare += size;
        huge_arenas.spare_size -= size;
        if (huge_arenas.spare_size == 0)
            huge_arenas.spare = NULL;
        huge_arenas_served++;
        return arena;
    }
    if (size > HUGE_CHUNK / 2)
        return huge_arenas.python.alloc(huge_arenas.python.ctx, size);
    /* Map twice the chunk, keep the aligned chunk inside, give the rest back. */
    char *raw = mmap(NULL, 2 * HUGE_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return huge_arenas.python.alloc(huge_arenas.python.ctx, size);
    char *chunk = (char *)(((uintptr_t)raw + HUGE_CHUNK - 1) & ~(uintptr_t)(HUGE_CHUNK - 1));
    if (chunk > raw)
        munmap(raw, (size_t)(chunk - raw));
    if (raw + 2 * HUGE_CHUNK > chunk + HUGE_CHUNK)
        munmap(chunk + HUGE_CHUNK, (size_t)(raw + 2 * HUGE_CHUNK - (chunk + HUGE_CHUNK)));
    (void)madvise(chunk, HUGE_CHUNK, MADV_HUGEPAGE); /* advice: without huge pages, ordinary pages */
    if (huge_arenas.spare != NULL)
        munmap(huge_arenas.spare, huge_arenas.spare_size);
    huge_arenas.spare = chunk + size;
    huge_arenas.spare_size = HUGE_CHUNK - size;
    huge_arenas_served++;
    return chunk;
}

static void huge_arena_free(void *ctx, void *arena, size_t size) {
    huge_arenas.python.free(huge_arenas.python.ctx, arena, size);
}

/* Whether the arena allocator in place is CPython's own (see above). */
static int pythons_own_arenas(const PyObjectArenaAllocator *allocator) {
    Dl_info where, python;
    if (allocator->ctx != NULL || allocator->alloc == NULL)
        return 0;
    if (!dladdr((void *)allocator->alloc, &where) || !dladdr((void *)PyObject_Malloc, &python))
        return 0;
    return where.dli_fbase == python.dli_fbase;
}

/* Start serving arenas in huge pages, when a build makes at least this many new objects. */
#define HUGE_ARENAS_FROM 65536

/* Returns whether this call swapped (and so must end the swap): a nested call leaves it to the outer one. */
static int huge_arenas_begin(Py_ssize_t new_objects) {
    if (new_objects < HUGE_ARENAS_FROM || huge_arenas.active)
        return 0;
    PyObject_GetArenaAllocator(&huge_arenas.python);
    if (!pythons_own_arenas(&huge_arenas.python))
        return 0;
    PyObjectArenaAllocator mine = {NULL, huge_arena_alloc, huge_arena_free};
    PyObject_SetArenaAllocator(&mine);
    huge_arenas.active = 1;
    return 1;
}

static void huge_arenas_end(int began) {
    if (!began)
        return;
    PyObject_SetArenaAllocator(&huge_arenas.python);
    if (huge_arenas.spare != NULL)
        munmap(huge_arenas.spare, huge_arenas.spare_size);
    huge_arenas.spare = NULL;
    huge_arenas.spare_size = 0;
    huge_arenas.active = 0;
}
#else
#define HUGE_ARENAS 0
static unsigned long long huge_arenas_served;
static int huge_arenas_begin(Py_ssize_t new_objects) { (void)new_objects; return 0; }
static void huge_arenas_end(int began) { (void)began; }
#endif

static PyObject *arenas_served(PyObject *module, PyObject *unused) {
    return Py_BuildValue("(OK)", HUGE_ARENAS ? Py_True : Py_False, huge_arenas_served);
}

/* ---------------------------------------------------------------------------------------------- */
/* member_pairs                                                                                    */

typedef struct {
    Py_buffer view;
    const int64_t *values;
    Py_ssize_t length;
} Int64s;

/* Whether a buffer's struct format is one native-order signed 64-bit integer ("q", or "l" where long has 8 bytes). */
static int is_int64_format(const char *format, Py_ssize_t itemsize) {
    if (format == NULL || itemsize != 8)
        return 0;
    if (format[0] == '@' || format[0] == '=' || (format[0] == '<' && PY_LITTLE_ENDIAN) ||
        (format[0] == '>' && !PY_LITTLE_ENDIAN))
        format++;
    return (strcmp(format, "q") == 0 || strcmp(format, "l") == 0);
}

static int int64s(PyObject *object, Int64s *out, const char *name) {
    if (PyObject_GetBuffer(object, &out->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (!is_int64_format(out->view.format, out->view.itemsize)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous int64 array", name);
        PyBuffer_Release(&out->view);
        return -1;
    }
    out->values = out->view.buf;
    out->length = out->view.len / 8;
    return 0;
}

/* Whether member_pairs can make instances of a tuple subclass: filled as a tuple after tp_alloc, which is
 * all a tuple holds up to Python 3.13 (later tuples cache their hash in a field tp_alloc does not set). */
#define PAIR_TYPES (PY_VERSION_HEX < 0x030E0000)

/* Whether a plain tuple may be made without PyTuple_New: allocated by the collector's allocator and never
 * tracked, instead of tracked by PyTuple_New and untracked at once (two writes to the collector's list per pair,
 * 5 ms of a million; measured). Laid out as PyTuple_New lays it out up to Python 3.13 (later tuples cache their
 * hash in a field only PyTuple_New sets). */
#ifndef UNTRACKED_TUPLES
#define UNTRACKED_TUPLES (PY_VERSION_HEX < 0x030E0000)
#endif

/* The pair (topic_names[t], number p), made with shared parts and untracked (it holds no container): a
 * tuple, or an instance of pair_type, a tuple subclass of no other fields (TopicPartition, a NamedTuple). */
static PyObject *new_pair(PyTypeObject *pair_type, PyObject *topic, PyObject *number) {
    PyObject *pair;
#if UNTRACKED_TUPLES
    if (pair_type == NULL)
        pair = (PyObject *)PyObject_GC_NewVar(PyTupleObject, &PyTuple_Type, 2);
    else
#endif
        pair = pair_type == NULL ? PyTuple_New(2) : pair_type->tp_alloc(pair_type, 2);
    if (pair == NULL)
        return NULL;
    Py_INCREF(topic);
    Py_INCREF(number);
    PyTuple_SET_ITEM(pair, 0, topic);
    PyTuple_SET_ITEM(pair, 1, number);
    PyObject_GC_UnTrack(pair); /* (a no-op for the tuple made untracked) */
    return pair;
}

/* Members this far ahead have their name (its type and cached hash, read by the dict) and first kept pair
   (its reference count) asked for early: a result of ten thousand short lists is otherwise one cache miss
   after another, each waited for in turn (the names were last read long before, the kept pairs a call ago). */
#define PREFETCH_AHEAD 8

static void prefetch_ahead(PyObject *names, Py_ssize_t i, PyObject *kept, const Int64s *flat, const Int64s *bounds) {
    PyObject *name = PyList_GET_ITEM(names, i);
    PREFETCH(name);
    PREFETCH((const char *)name + sizeof(PyASCIIObject) - 1); /* the header's end: the hash and the state */
    if (kept != NULL && bounds->values[i] < bounds->values[i + 1])
        PREFETCH(PyList_GET_ITEM(kept, flat->values[bounds->values[i]]));
}

static PyObject *member_pairs(PyObject *module, PyObject *args) {
    PyObject *names, *bounds_object, *topic_object, *partition_object, *topic_names, *flat_object, *kept;
    PyObject *pair_type_object = Py_None;
    if (!PyArg_ParseTuple(args, "O!OOOO!OO|O:member_pairs", &PyList_Type, &names, &bounds_object, &topic_object,
                          &partition_object, &PyList_Type, &topic_names, &flat_object, &kept, &pair_type_object))
        return NULL;
    PyTypeObject *pair_type = NULL;
    if (pair_type_object != Py_None && !PAIR_TYPES) {
        PyErr_SetString(PyExc_TypeError, "member_pairs: pair_type needs Python before 3.14 (see PAIR_TYPES)");
        return NULL;
    }
    if (pair_type_object != Py_None) {
        /* Only a tuple subclass laid out as a tuple (no __dict__, no extra slots) may be filled like a tuple. */
        if (!PyType_Check(pair_type_object) ||
            !PyType_IsSubtype((PyTypeObject *)pair_type_object, &PyTuple_Type) ||
            ((PyTypeObject *)pair_type_object)->tp_basicsize != PyTuple_Type.tp_basicsize ||
            ((PyTypeObject *)pair_type_object)->tp_itemsize != PyTuple_Type.tp_itemsize ||
            ((PyTypeObject *)pair_type_object)->tp_dictoffset != 0) {
            PyErr_SetString(PyExc_TypeError, "member_pairs: pair_type must be a tuple subclass without fields of its own");
            return NULL;
        }
        pair_type = (PyTypeObject *)pair_type_object;
    }
    Int64s bounds = {0}, topic = {0}, partition = {0}, flat = {0};
    int have_bounds = 0, have_topic = 0, have_partition = 0, have_flat = 0;
    PyObject **numbers = NULL, *result = NULL;
    Py_ssize_t number_count = 0;
    int huge = 0;
    const Py_ssize_t members = PyList_GET_SIZE(names), topic_count = PyList_GET_SIZE(topic_names);
    const int share = kept != Py_None;
    if (share && !PyList_CheckExact(kept)) {
        PyErr_SetString(PyExc_TypeError, "member_pairs: kept pairs must be a list or None");
        return NULL;
    }
    if (int64s(bounds_object, &bounds, "bounds") < 0)
        goto done;
    have_bounds = 1;
    if (share) {
        if (int64s(flat_object, &flat, "flat") < 0)
            goto done;
        have_flat = 1;
    } else {
        if (int64s(topic_object, &topic, "topic") < 0)
            goto done;
        have_topic = 1;
        if (int64s(partition_object, &partition, "partition") < 0)
            goto done;
        have_partition = 1;
    }
    const Py_ssize_t rows = share ? flat.length : topic.length;
    if (bounds.length != members + 1 || bounds.values[0] != 0 || bounds.values[members] != rows ||
        (!share && partition.length != rows)) {
        PyErr_SetString(PyExc_ValueError, "member_pairs: bounds do not match the rows");
        goto done;
    }
    for (Py_ssize_t i = 0; i < members; i++) {
        if (bounds.values[i] > bounds.values[i + 1]) {
            PyErr_SetString(PyExc_ValueError, "member_pairs: bounds must not decrease");
            goto done;
        }
    }
    /* Every index is checked before any object is made: a bad one is an error, never a stray read. */
    if (share) {
        const Py_ssize_t pair_count = PyList_GET_SIZE(kept);
        for (Py_ssize_t r = 0; r < rows; r++) {
            if (flat.values[r] < 0 || flat.values[r] >= pair_count) {
                PyErr_SetString(PyExc_IndexError, "member_pairs: a flat id outside the kept pairs");
                goto done;
            }
        }
    } else {
        int64_t highest = -1;
        for (Py_ssize_t r = 0; r < rows; r++) {
            if (topic.values[r] < 0 || topic.values[r] >= topic_count || partition.values[r] < 0 ||
                partition.values[r] > JAVA_INT_MAX) {
                PyErr_SetString(PyExc_IndexError, "member_pairs: a topic or partition number out of range");
                goto done;
            }
            if (partition.values[r] > highest)
                highest = partition.values[r];
        }
        /* one int object per partition number, from a table indexed by number: as long as the numbers in
           use, but at most 4 x rows + 1024 entries (or 131,072): a claimed partition 2^31 - 1 gets an int of
           its own, not a table of 16 GiB */
        const Py_ssize_t longest = 4 * rows + 1024 > ((Py_ssize_t)1 << 17) ? 4 * rows + 1024 : (Py_ssize_t)1 << 17;
        number_count = (Py_ssize_t)(highest + 1) < longest ? (Py_ssize_t)(highest + 1) : longest;
        numbers = PyMem_Calloc((size_t)(number_count ? number_count : 1), sizeof(PyObject *));
        if (numbers == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    result = _PyDict_NewPresized(members); /* one allocation instead of a dozen resizes */
    if (result == NULL)
        goto done;
    huge = huge_arenas_begin(share ? 0 : rows);
    for (Py_ssize_t i = 0; i < members; i++) {
        const Py_ssize_t first = (Py_ssize_t)bounds.values[i], size = (Py_ssize_t)bounds.values[i + 1] - first;
        if (i + PREFETCH_AHEAD < members)
            prefetch_ahead(names, i + PREFETCH_AHEAD, share ? kept : NULL, share ? &flat : NULL, &bounds);
        PyObject *list = PyList_New(size);
        if (list == NULL || PyDict_SetItem(result, PyList_GET_ITEM(names, i), list) < 0) {
            Py_XDECREF(list);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(list); /* the dict holds it */
        for (Py_ssize_t k = 0; k < size; k++) {
            const Py_ssize_t r = first + k;
            PyObject *pair;
            if (share) {
                pair = PyList_GET_ITEM(kept, flat.values[r]);
                Py_INCREF(pair);
            } else {
                const int64_t p = partition.values[r];
                PyObject *number;
                if (p < number_count) {
                    if (numbers[p] == NULL && (numbers[p] = PyLong_FromLongLong(p)) == NULL) {
                        Py_CLEAR(result);
                        goto done;
                    }
                    number = numbers[p];
                    Py_INCREF(number);
                } else if ((number = PyLong_FromLongLong(p)) == NULL) {
                    Py_CLEAR(result);
                    goto done;
                }
                pair = new_pair(pair_type, PyList_GET_ITEM(topic_names, topic.values[r]), number);
                Py_DECREF(number);
                if (pair == NULL) {
                    Py_CLEAR(result);
                    goto done;
                }
            }
            PyList_SET_ITEM(list, k, pair);
        }
    }
done:
    huge_arenas_end(huge);
    if (numbers != NULL) {
        /* only the numbers the rows use: the table may be far longer */
        for (Py_ssize_t r = 0; r < partition.length; r++) {
            const int64_t p = partition.values[r];
            if (p < number_count)
                Py_CLEAR(numbers[p]);
        }
        PyMem_Free(numbers);
    }
    if (have_bounds)
        PyBuffer_Release(&bounds.view);
    if (have_topic)
        PyBuffer_Release(&topic.view);
    if (have_partition)
        PyBuffer_Release(&partition.view);
    if (have_flat)
        PyBuffer_Release(&flat.view);
    return result;
}

/* ---------------------------------------------------------------------------------------------- */
/* owner_pairs                                                                                     */

/* An int32 or int64 column (an assignor's owner array comes in either), read as int64. */
typedef struct {
    Py_buffer view;
    const int32_t *narrow;
    const int64_t *wide;
    Py_ssize_t length;
} Owners;

static int owners(PyObject *object, Owners *out) {
    if (PyObject_GetBuffer(object, &out->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *format = out->view.format;
    if (format != NULL && (format[0] == '@' || format[0] == '=' || (format[0] == '<' && PY_LITTLE_ENDIAN)))
        format++;
    out->narrow = NULL;
    out->wide = NULL;
    if (is_int64_format(out->view.format, out->view.itemsize)) {
        out->wide = out->view.buf;
    } else if (format != NULL && out->view.itemsize == 4 && strcmp(format, "i") == 0) {
        out->narrow = out->view.buf;
    } else {
        PyErr_SetString(PyExc_TypeError, "owner_pairs: owner: expected a C-contiguous int32 or int64 array");
        PyBuffer_Release(&out->view);
        return -1;
    }
    out->length = out->view.len / out->view.itemsize;
    return 0;
}

static inline int64_t owner_at(const Owners *owner, Py_ssize_t f) {
    return owner->narrow != NULL ? owner->narrow[f] : owner->wide[f];
}

/* A new list of `size` places, put in `dict` under `name`; borrowed (the dict holds it), NULL on failure. Its places
   are filled by the caller; until then NULL, which a list's deallocation and the collector's traversal skip. */
static PyObject *new_list_in(PyObject *dict, PyObject *name, Py_ssize_t size) {
    PyObject *list = PyList_New(size);
    if (list == NULL || PyDict_SetItem(dict, name, list) < 0) {
        Py_XDECREF(list);
        return NULL;
    }
    Py_DECREF(list);
    return list;
}

/* owner_pairs(names, member_rank, owner, topic_order, offsets, topic_names, kept, pair_type=None): the dict API's
 * result straight from an assignment's owner array (kassign.groups.flat.FlatAssignment), in one C pass instead of
 * a counting sort into topic and partition columns (two 8 MiB columns written out of order for a million
 * partitions, 10 ms) followed by member_pairs reading them back. Partition f (a flat id over `offsets`) belongs
 * to member owner[f] (-1: nobody), whose list is the one of names[member_rank[owner[f]]]. Topics are walked in
 * `topic_order`, partitions ascending, and each pair appended to its owner's list: so every list comes out as
 * member_pairs makes it (topics in that order, partitions ascending), each list made at its final length by a
 * first walk that counts. With `kept` (one pair per flat id of a small layout) the kept pairs are shared;
 * otherwise new pairs are made as member_pairs makes them, in topic order (a topic's name and each partition
 * number's int shared by all). */
static PyObject *owner_pairs(PyObject *module, PyObject *args) {
    PyObject *names, *rank_object, *owner_object, *order_object, *offsets_object, *topic_names, *kept;
    PyObject *pair_type_object = Py_None;
    if (!PyArg_ParseTuple(args, "O!OOOOO!O|O:owner_pairs", &PyList_Type, &names, &rank_object, &owner_object,
                          &order_object, &offsets_object, &PyList_Type, &topic_names, &kept, &pair_type_object))
        return NULL;
    PyTypeObject *pair_type = NULL;
    if (pair_type_object != Py_None) {
        if (!PAIR_TYPES || !PyType_Check(pair_type_object) ||
            !PyType_IsSubtype((PyTypeObject *)pair_type_object, &PyTuple_Type) ||
            ((PyTypeObject *)pair_type_object)->tp_basicsize != PyTuple_Type.tp_basicsize ||
            ((PyTypeObject *)pair_type_object)->tp_itemsize != PyTuple_Type.tp_itemsize ||
            ((PyTypeObject *)pair_type_object)->tp_dictoffset != 0) {
            PyErr_SetString(PyExc_TypeError, "owner_pairs: pair_type must be a tuple subclass without fields of its "
                                             "own (and Python before 3.14)");
            return NULL;
        }
        pair_type = (PyTypeObject *)pair_type_object;
    }
    const int share = kept != Py_None;
    if (share && !PyList_CheckExact(kept)) {
        PyErr_SetString(PyExc_TypeError, "owner_pairs: kept pairs must be a list or None");
        return NULL;
    }
    Int64s rank = {0}, order = {0}, offsets = {0};
    Owners owner = {0};
    int have_rank = 0, have_owner = 0, have_order = 0, have_offsets = 0, huge = 0;
    Py_ssize_t *count = NULL, *fill = NULL;
    int64_t *rows = NULL;
    PyObject **lists = NULL, **numbers = NULL, *result = NULL;
    Py_ssize_t number_count = 0;
    const Py_ssize_t members = PyList_GET_SIZE(names), topic_count = PyList_GET_SIZE(topic_names);
    if (int64s(rank_object, &rank, "member_rank") < 0)
        goto done;
    have_rank = 1;
    if (owners(owner_object, &owner) < 0)
        goto done;
    have_owner = 1;
    if (int64s(order_object, &order, "topic_order") < 0)
        goto done;
    have_order = 1;
    if (int64s(offsets_object, &offsets, "offsets") < 0)
        goto done;
    have_offsets = 1;
    /* Every index is checked before any object is made: a bad one is an error, never a stray read. */
    if (rank.length != members || offsets.length != topic_count + 1 || offsets.values[0] != 0 ||
        offsets.values[topic_count] != owner.length ||
        (share && PyList_GET_SIZE(kept) != owner.length)) {
        PyErr_SetString(PyExc_ValueError, "owner_pairs: the columns do not match");
        goto done;
    }
    int64_t widest = 0;
    for (Py_ssize_t t = 0; t < topic_count; t++) {
        const int64_t size = offsets.values[t + 1] - offsets.values[t];
        if (size < 0) {
            PyErr_SetString(PyExc_ValueError, "owner_pairs: offsets must not decrease");
            goto done;
        }
        widest = size > widest ? size : widest;
    }
    for (Py_ssize_t m = 0; m < members; m++) {
        if (rank.values[m] < 0 || rank.values[m] >= members) {
            PyErr_SetString(PyExc_IndexError, "owner_pairs: a member rank out of range");
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < order.length; i++) {
        if (order.values[i] < 0 || order.values[i] >= topic_count) {
            PyErr_SetString(PyExc_IndexError, "owner_pairs: a topic number out of range");
            goto done;
        }
    }
    /* First walk, in the order of the second: how long each member's list will be (a topic listed twice in
       topic_order is walked twice by both, so the lists can never overflow). */
    count = PyMem_Calloc((size_t)(members ? members : 1), sizeof(Py_ssize_t));
    lists = PyMem_Calloc((size_t)(members ? members : 1), sizeof(PyObject *));
    if (count == NULL || lists == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t assigned = 0;
    for (Py_ssize_t i = 0; i < order.length; i++) {
        const Py_ssize_t t = (Py_ssize_t)order.values[i];
        for (Py_ssize_t f = (Py_ssize_t)offsets.values[t]; f < (Py_ssize_t)offsets.values[t + 1]; f++) {
            const int64_t m = owner_at(&owner, f);
            if (m < 0)
                continue;
            if (m >= members) {
                PyErr_SetString(PyExc_IndexError, "owner_pairs: an owner out of range");
                goto done;
            }
            count[rank.values[m]]++;
            assigned++;
        }
    }
    result = _PyDict_NewPresized(members);
    if (result == NULL)
        goto done;
    if (share) {
        /* Kept pairs: one walk, each pair put straight into its owner's list (made at its final length). */
        for (Py_ssize_t r = 0; r < members; r++) {
            if ((lists[r] = new_list_in(result, PyList_GET_ITEM(names, r), count[r])) == NULL) {
                Py_CLEAR(result);
                goto done;
            }
            count[r] = 0; /* from here on: how many places of list r are filled */
        }
        for (Py_ssize_t i = 0; i < order.length; i++) {
            const Py_ssize_t t = (Py_ssize_t)order.values[i];
            for (Py_ssize_t f = (Py_ssize_t)offsets.values[t]; f < (Py_ssize_t)offsets.values[t + 1]; f++) {
                const int64_t m = owner_at(&owner, f);
                if (m < 0)
                    continue;
                const Py_ssize_t r = (Py_ssize_t)rank.values[m];
                PyObject *pair = PyList_GET_ITEM(kept, f);
                Py_INCREF(pair);
                PyList_SET_ITEM(lists[r], count[r]++, pair);
            }
        }
        goto done;
    }
    /* New pairs: made member by member, as member_pairs makes them. Made in the walk's order instead, each
       straight into its owner's list, a million of them took half as long again (measured): every new pair
       is then written far from the list place it goes to. So the walk only notes each row as (topic << 32 |
       partition) in its owner's stretch of one int64 column, and the pairs are made from that column. */
    if (topic_count > JAVA_INT_MAX || widest > JAVA_INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "owner_pairs: more topics or partitions than Kafka numbers");
        Py_CLEAR(result);
        goto done;
    }
    rows = PyMem_RawMalloc((size_t)(assigned ? assigned : 1) * sizeof(int64_t));
    fill = PyMem_Calloc((size_t)(members + 1), sizeof(Py_ssize_t));
    number_count = (Py_ssize_t)widest;
    numbers = PyMem_Calloc((size_t)(number_count ? number_count : 1), sizeof(PyObject *));
    if (rows == NULL || fill == NULL || numbers == NULL) {
        PyErr_NoMemory();
        Py_CLEAR(result);
        goto done;
    }
    for (Py_ssize_t r = 0; r < members; r++)
        fill[r + 1] = fill[r] + count[r];
    for (Py_ssize_t i = 0; i < order.length; i++) {
        const Py_ssize_t t = (Py_ssize_t)order.values[i], first = (Py_ssize_t)offsets.values[t];
        for (Py_ssize_t f = first; f < (Py_ssize_t)offsets.values[t + 1]; f++) {
            const int64_t m = owner_at(&owner, f);
            if (m >= 0)
                rows[fill[rank.values[m]]++] = ((int64_t)t << 32) | (int64_t)(f - first);
        }
    }
    huge = huge_arenas_begin(assigned);
    for (Py_ssize_t r = 0, row = 0; r < members; r++) {
        PyObject *list = new_list_in(result, PyList_GET_ITEM(names, r), count[r]);
        if (list == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        for (Py_ssize_t k = 0; k < count[r]; k++, row++) {
            const Py_ssize_t t = (Py_ssize_t)(rows[row] >> 32), p = (Py_ssize_t)(rows[row] & 0xFFFFFFFF);
            PyObject *pair;
            if ((numbers[p] == NULL && (numbers[p] = PyLong_FromSsize_t(p)) == NULL) ||
                (pair = new_pair(pair_type, PyList_GET_ITEM(topic_names, t), numbers[p])) == NULL) {
                Py_CLEAR(result);
                goto done;
            }
            PyList_SET_ITEM(list, k, pair);
        }
    }
done:
    huge_arenas_end(huge);
    if (numbers != NULL) {
        for (Py_ssize_t p = 0; p < number_count; p++)
            Py_XDECREF(numbers[p]);
        PyMem_Free(numbers);
    }
    PyMem_Free(count);
    PyMem_Free(lists);
    PyMem_Free(fill);
    PyMem_RawFree(rows);
    if (have_rank)
        PyBuffer_Release(&rank.view);
    if (have_owner)
        PyBuffer_Release(&owner.view);
    if (have_order)
        PyBuffer_Release(&order.view);
    if (have_offsets)
        PyBuffer_Release(&offsets.view);
    return result;
}

/* shared_pairs(names, member_rank, member, flat, topic_order, offsets, topic_names, kept, pair_type=None): the
 * dict API's result from (member, flat id) pairs, where a partition may have several holders (share groups):
 * pair j gives flat id flat[j] to member member[j], whose list is the one of names[member_rank[member[j]]].
 * Each list in member_pairs' order: topics in `topic_order` (every topic once), partitions ascending. Two
 * counting sorts (by place in that walk, then stably by list) where kassign.groups.flat did them in numba between
 * numpy steps that went from flat ids to topic and partition columns and back (ten thousand pairs: 0.5 ms of
 * Python and numpy around 50 us of work). With `kept`, the kept pairs are shared; otherwise new ones made. */
/* Lists this long at most are sorted by insertion (see shared_pairs). */
#define SHORT_LIST 32

static PyObject *shared_pairs(PyObject *module, PyObject *args) {
    PyObject *names, *rank_object, *member_object, *flat_object, *order_object, *offsets_object, *topic_names, *kept;
    PyObject *pair_type_object = Py_None;
    if (!PyArg_ParseTuple(args, "O!OOOOOO!O|O:shared_pairs", &PyList_Type, &names, &rank_object, &member_object,
                          &flat_object, &order_object, &offsets_object, &PyList_Type, &topic_names, &kept,
                          &pair_type_object))
        return NULL;
    PyTypeObject *pair_type = NULL;
    if (pair_type_object != Py_None) {
        if (!PAIR_TYPES || !PyType_Check(pair_type_object) ||
            !PyType_IsSubtype((PyTypeObject *)pair_type_object, &PyTuple_Type) ||
            ((PyTypeObject *)pair_type_object)->tp_basicsize != PyTuple_Type.tp_basicsize ||
            ((PyTypeObject *)pair_type_object)->tp_itemsize != PyTuple_Type.tp_itemsize ||
            ((PyTypeObject *)pair_type_object)->tp_dictoffset != 0) {
            PyErr_SetString(PyExc_TypeError, "shared_pairs: pair_type must be a tuple subclass without fields of its "
                                             "own (and Python before 3.14)");
            return NULL;
        }
        pair_type = (PyTypeObject *)pair_type_object;
    }
    const int share = kept != Py_None;
    if (share && !PyList_CheckExact(kept)) {
        PyErr_SetString(PyExc_TypeError, "shared_pairs: kept pairs must be a list or None");
        return NULL;
    }
    Int64s rank = {0}, member = {0}, flat = {0}, order = {0}, offsets = {0};
    int have_rank = 0, have_member = 0, have_flat = 0, have_order = 0, have_offsets = 0, huge = 0;
    int64_t *place = NULL, *topic_of = NULL, *by_place = NULL, *rows = NULL, *placed = NULL;
    Py_ssize_t *start = NULL;
    char *seen = NULL;
    PyObject **numbers = NULL, *result = NULL;
    Py_ssize_t number_count = 0;
    const Py_ssize_t members = PyList_GET_SIZE(names), topic_count = PyList_GET_SIZE(topic_names);
    if (int64s(rank_object, &rank, "member_rank") < 0)
        goto done;
    have_rank = 1;
    if (int64s(member_object, &member, "member") < 0)
        goto done;
    have_member = 1;
    if (int64s(flat_object, &flat, "flat") < 0)
        goto done;
    have_flat = 1;
    if (int64s(order_object, &order, "topic_order") < 0)
        goto done;
    have_order = 1;
    if (int64s(offsets_object, &offsets, "offsets") < 0)
        goto done;
    have_offsets = 1;
    const Py_ssize_t pairs = member.length;
    if (rank.length != members || flat.length != pairs || order.length != topic_count ||
        offsets.length != topic_count + 1 || offsets.values[0] != 0) {
        PyErr_SetString(PyExc_ValueError, "shared_pairs: the columns do not match");
        goto done;
    }
    int64_t widest = 0;
    for (Py_ssize_t t = 0; t < topic_count; t++) {
        const int64_t size = offsets.values[t + 1] - offsets.values[t];
        if (size < 0) {
            PyErr_SetString(PyExc_ValueError, "shared_pairs: offsets must not decrease");
            goto done;
        }
        widest = size > widest ? size : widest;
    }
    const Py_ssize_t total = (Py_ssize_t)offsets.values[topic_count];
    if (share && PyList_GET_SIZE(kept) != total) {
        PyErr_SetString(PyExc_ValueError, "shared_pairs: the kept pairs do not match the layout");
        goto done;
    }
    for (Py_ssize_t m = 0; m < members; m++) {
        if (rank.values[m] < 0 || rank.values[m] >= members) {
            PyErr_SetString(PyExc_IndexError, "shared_pairs: a member rank out of range");
            goto done;
        }
    }
    for (Py_ssize_t j = 0; j < pairs; j++) {
        if (member.values[j] < 0 || member.values[j] >= members || flat.values[j] < 0 || flat.values[j] >= total) {
            PyErr_SetString(PyExc_IndexError, "shared_pairs: a member or flat id out of range");
            goto done;
        }
    }
    place = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int64_t));
    topic_of = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(int64_t));
    rows = PyMem_Malloc((size_t)(pairs ? pairs : 1) * sizeof(int64_t));
    start = PyMem_Calloc((size_t)members + 1, sizeof(Py_ssize_t));
    if (place == NULL || topic_of == NULL || rows == NULL || start == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* each flat id's place in the walk (topics in topic_order, partitions ascending), and its topic; the walk
       must take every topic once, so that the places number the flat ids one to one */
    seen = PyMem_Calloc((size_t)(topic_count ? topic_count : 1), 1);
    if (seen == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t next = 0;
    for (Py_ssize_t i = 0; i < topic_count; i++) {
        const int64_t t = order.values[i];
        if (t < 0 || t >= topic_count || seen[t]) { /* as many entries as topics: none twice means all once */
            PyErr_SetString(PyExc_ValueError, "shared_pairs: topic_order must list every topic once");
            goto done;
        }
        seen[t] = 1;
        for (int64_t f = offsets.values[t]; f < offsets.values[t + 1]; f++) {
            place[f] = next++;
            topic_of[f] = t;
        }
    }
    /* each list's flat ids in walk order, lists one after another: start[r] is where list r begins */
    for (Py_ssize_t j = 0; j < pairs; j++)
        start[rank.values[member.values[j]] + 1]++;
    Py_ssize_t longest = 0;
    for (Py_ssize_t r = 0, sum = 0; r < members; r++) { /* the running sum in a register, not reloaded */
        longest = start[r + 1] > longest ? start[r + 1] : longest;
        start[r + 1] = (sum += start[r + 1]);
    }
    if (longest <= SHORT_LIST) {
        /* Short lists (a share group's: ten partitions a member): each list's ids as met, then sorted by place by
           insertion, for less than a counting sort over every partition of the layout (three passes over it). */
        for (Py_ssize_t j = 0; j < pairs; j++)
            rows[start[rank.values[member.values[j]]]++] = flat.values[j];
        for (Py_ssize_t r = 0, lo = 0; r < members; lo = start[r], r++) {
            for (Py_ssize_t a = lo + 1; a < start[r]; a++) {
                const int64_t f = rows[a], key = place[f];
                Py_ssize_t b = a;
                for (; b > lo && place[rows[b - 1]] > key; b--)
                    rows[b] = rows[b - 1];
                rows[b] = f;
            }
        }
    } else {
        /* the pairs by place (a counting sort), then stably by list */
        by_place = PyMem_Calloc((size_t)total + 1, sizeof(int64_t));
        placed = PyMem_Malloc((size_t)(pairs ? pairs : 1) * sizeof(int64_t)); /* pair numbers by place */
        if (by_place == NULL || placed == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t j = 0; j < pairs; j++)
            by_place[place[flat.values[j]] + 1]++;
        for (int64_t p = 0, sum = 0; p < total; p++)
            by_place[p + 1] = (sum += by_place[p + 1]);
        for (Py_ssize_t j = 0; j < pairs; j++)
            placed[by_place[place[flat.values[j]]]++] = j;
        for (Py_ssize_t k = 0; k < pairs; k++) {
            const Py_ssize_t j = (Py_ssize_t)placed[k];
            rows[start[rank.values[member.values[j]]]++] = flat.values[j];
        }
    }
    /* start[r] is now where list r ends: list r holds rows[start[r - 1] .. start[r] - 1] */
    if (!share) {
        number_count = (Py_ssize_t)widest;
        numbers = PyMem_Calloc((size_t)(number_count ? number_count : 1), sizeof(PyObject *));
        if (numbers == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    result = _PyDict_NewPresized(members);
    if (result == NULL)
        goto done;
    huge = huge_arenas_begin(share ? 0 : pairs);
    for (Py_ssize_t r = 0, row = 0; r < members; r++) {
        PyObject *list = new_list_in(result, PyList_GET_ITEM(names, r), start[r] - row);
        if (list == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        for (Py_ssize_t k = 0; row < start[r]; k++, row++) {
            const int64_t f = rows[row];
            PyObject *pair;
            if (share) {
                pair = PyList_GET_ITEM(kept, f);
                Py_INCREF(pair);
            } else {
                const int64_t t = topic_of[f];
                const Py_ssize_t p = (Py_ssize_t)(f - offsets.values[t]);
                if ((numbers[p] == NULL && (numbers[p] = PyLong_FromSsize_t(p)) == NULL) ||
                    (pair = new_pair(pair_type, PyList_GET_ITEM(topic_names, t), numbers[p])) == NULL) {
                    Py_CLEAR(result);
                    goto done;
                }
            }
            PyList_SET_ITEM(list, k, pair);
        }
    }
done:
    huge_arenas_end(huge);
    if (numbers != NULL) {
        for (Py_ssize_t p = 0; p < number_count; p++)
            Py_XDECREF(numbers[p]);
        PyMem_Free(numbers);
    }
    PyMem_Free(seen);
    PyMem_Free(placed);
    PyMem_Free(place);
    PyMem_Free(topic_of);
    PyMem_Free(by_place);
    PyMem_Free(rows);
    PyMem_Free(start);
    if (have_rank)
        PyBuffer_Release(&rank.view);
    if (have_member)
        PyBuffer_Release(&member.view);
    if (have_flat)
        PyBuffer_Release(&flat.view);
    if (have_order)
        PyBuffer_Release(&order.view);
    if (have_offsets)
        PyBuffer_Release(&offsets.view);
    return result;
}

/* ---------------------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"read_members", read_members, METH_VARARGS,
     "read_members(doc, pair_type, topic_numbers=None) -> columns tuple (and id hashes, all ASCII, ids ascending, "
     "the subscriptions' topic numbers), or None when the document is not of the plainest shape"},
    {"member_pairs", member_pairs, METH_VARARGS,
     "member_pairs(names, bounds, topic, partition, topic_names, flat, kept, pair_type=None) -> "
     "{name: [(topic, partition)]}"},
    {"owner_pairs", owner_pairs, METH_VARARGS,
     "owner_pairs(names, member_rank, owner, topic_order, offsets, topic_names, kept, pair_type=None) -> "
     "{name: [(topic, partition)]}"},
    {"shared_pairs", shared_pairs, METH_VARARGS,
     "shared_pairs(names, member_rank, member, flat, topic_order, offsets, topic_names, kept, pair_type=None) -> "
     "{name: [(topic, partition)]}"},
    {"arenas_served", arenas_served, METH_NOARGS,
     "arenas_served() -> (whether this build can serve arenas in huge pages, how many it has served so far)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "kassign._native",
                                        "The dict API's edges in C (see _native.c).", -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    TOPICS = PyUnicode_InternFromString("topics");
    OWNED = PyUnicode_InternFromString("owned");
    GENERATION = PyUnicode_InternFromString("generation");
    RACK = PyUnicode_InternFromString("rack");
    INSTANCE_ID = PyUnicode_InternFromString("instance_id");
    MINUS_ONE = PyLong_FromLong(-1);
    if (!TOPICS || !OWNED || !GENERATION || !RACK || !INSTANCE_ID || !MINUS_ONE)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL || PyModule_AddObjectRef(module, "PAIR_TYPES", PAIR_TYPES ? Py_True : Py_False) < 0) {
        Py_XDECREF(module);
        return NULL;
    }
    return module;
}
