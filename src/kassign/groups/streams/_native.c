/* kassign.groups.streams._native: a streams group's two dict edges in C.
 *
 * read_members(members, position, starts) reads the scenario's "members" object as
 * kassign.groups.streams.tasks reads it, for the plainest shape only: exact dicts, exact str ids, exact
 * ints, lists or tuples of them. It returns None for anything else (a str or int subclass, a numpy
 * integer, an unknown field, a missing process id, a negative partition ...), and the Python reader then
 * decides, so every error message comes from one place. `position` maps each subtopology id to its
 * number, `starts` (list of int) holds each subtopology's first task number and, last, the task count.
 * It returns (member_process, process_ids, task, owner, kind, offsets): int64 columns as bytearrays and
 * the distinct process ids in order of first listing; one (task, owner, kind) row per listed partition of
 * a task that exists (kind 0 active, 1 standby, 2 warmup), in listing order, tasks that no longer exist
 * left out as the Python reader leaves them out. `offsets` is None when no member reports offset sums
 * (no "offset_sums", or None), else the (task, member, sum) columns of each reported sum of a task that
 * exists, member by member, each member's in its dict's order: names "SUBTOPOLOGY_PARTITION" split at
 * the last "_" (a non-empty subtopology id; the partition ASCII digits without sign or leading zeros, at
 * most JAVA_INT_MAX), sums exact ints from 0 to 2^63 - 1; anything else declines.
 *
 * build_answer(member_ids, sids, active, standby) builds the answer {member: {"active": {sid:
 * [partitions]}, "standby": {...}, "warmup": {}}}, members sorted (the tuple `member_ids` holds distinct
 * strs; sorted as Python sorts strs, by code point). `active` and `standby` are each (member, sub,
 * partition) int64 columns (buffers), member a position in `member_ids`, sorted by member, then
 * subtopology, then partition; `sids` (tuple of str) names the subtopologies.
 *
 * Every new object is owned by exactly one container before the next allocation, so an error at any
 * point frees all.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../_column.h"


static PyObject *PROCESS_ID, *KINDS[3], *INSTANCE_ID, *RACK, *CLIENT_TAGS, *ACTIVE, *STANDBY, *WARMUP, *OFFSET_SUMS;

/* Outcome of reading one part: read, not the plain shape (decline), or a Python error. */
enum { READ = 0, DECLINE = 1, FAILED = -1 };


typedef struct {
    PyObject *position; /* dict: subtopology id -> number */
    int64_t *starts;    /* subtopology s: tasks starts[s] .. starts[s + 1] - 1 */
    Py_ssize_t subtopologies;
    Column task, owner, kind;
    int reported; /* whether a member reports offset sums (a non-None "offset_sums") */
    Column offset_task, offset_member, offset_sum;
} Tasks;

/* Subtopology `sid`'s first task number and size; size 0 for a subtopology that does not exist. */
static int subtopology(Tasks *tasks, PyObject *sid, int64_t *start, int64_t *size) {
    PyObject *number = PyDict_GetItemWithError(tasks->position, sid);
    *start = *size = 0;
    if (number == NULL)
        return PyErr_Occurred() ? FAILED : READ;
    Py_ssize_t s = PyLong_AsSsize_t(number);
    if (s < 0 || s >= tasks->subtopologies)
        return PyErr_Occurred() ? FAILED : DECLINE;
    *start = tasks->starts[s];
    *size = tasks->starts[s + 1] - *start;
    return READ;
}

/* One member's map of one kind: {sid: [partitions]}. */
static int read_tasks(Tasks *tasks, PyObject *held, int64_t member, int64_t kind) {
    if (!PyDict_CheckExact(held))
        return DECLINE;
    Py_ssize_t cursor = 0;
    PyObject *sid, *partitions;
    while (PyDict_Next(held, &cursor, &sid, &partitions)) {
        if (!PyUnicode_CheckExact(sid) || (!PyList_CheckExact(partitions) && !PyTuple_CheckExact(partitions)))
            return DECLINE;
        int64_t start, size; /* a subtopology that does not exist: size 0, nothing kept */
        int outcome = subtopology(tasks, sid, &start, &size);
        if (outcome != READ)
            return outcome;
        Py_ssize_t count = PySequence_Fast_GET_SIZE(partitions);
        PyObject **items = PySequence_Fast_ITEMS(partitions);
        for (Py_ssize_t i = 0; i < count; i++) {
            if (!PyLong_CheckExact(items[i]))
                return DECLINE;
            int overflow = 0;
            long long p = PyLong_AsLongLongAndOverflow(items[i], &overflow);
            if (overflow || p < 0 || p > JAVA_INT_MAX)
                return DECLINE;
            if (p < size && (column_push(&tasks->task, start + p) < 0 || column_push(&tasks->owner, member) < 0 ||
                             column_push(&tasks->kind, kind) < 0))
                return FAILED;
        }
    }
    return READ;
}

/* One member's offset sums: {"SUBTOPOLOGY_PARTITION": sum}, as tasks.py's _offset_sums reads them. */
static int read_offset_sums(Tasks *tasks, PyObject *sums, int64_t member) {
    if (!PyDict_CheckExact(sums))
        return DECLINE;
    Py_ssize_t cursor = 0;
    PyObject *name, *value;
    while (PyDict_Next(sums, &cursor, &name, &value)) {
        if (!PyUnicode_CheckExact(name) || !PyLong_CheckExact(value))
            return DECLINE;
        int overflow = 0;
        long long sum = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (sum == -1 && PyErr_Occurred())
            return FAILED;
        if (overflow || sum < 0)
            return DECLINE;
        Py_ssize_t length = PyUnicode_GET_LENGTH(name);
        Py_ssize_t underscore = PyUnicode_FindChar(name, '_', 0, length, -1);
        if (underscore == -2)
            return FAILED;
        Py_ssize_t digits = length - underscore - 1;
        if (underscore <= 0 || digits < 1 || digits > 10) /* no "_", no subtopology id, no partition */
            return DECLINE;
        int kind = PyUnicode_KIND(name);
        const void *data = PyUnicode_DATA(name);
        int64_t partition = 0;
        for (Py_ssize_t i = underscore + 1; i < length; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < '0' || c > '9')
                return DECLINE;
            partition = 10 * partition + (int64_t)(c - '0');
        }
        if ((digits > 1 && PyUnicode_READ(kind, data, underscore + 1) == '0') || partition > JAVA_INT_MAX)
            return DECLINE;
        PyObject *sid = PyUnicode_Substring(name, 0, underscore);
        if (sid == NULL)
            return FAILED;
        int64_t start, size;
        int outcome = subtopology(tasks, sid, &start, &size);
        Py_DECREF(sid);
        if (outcome != READ)
            return outcome;
        if (partition < size && (column_push(&tasks->offset_task, start + partition) < 0 ||
                                 column_push(&tasks->offset_member, member) < 0 ||
                                 column_push(&tasks->offset_sum, sum) < 0))
            return FAILED;
    }
    return READ;
}

/* The entry's optional text field: absent, None or an exact str. */
static int optional_text(PyObject *spec, PyObject *name, Py_ssize_t *fields) {
    PyObject *value = PyDict_GetItemWithError(spec, name);
    if (value == NULL)
        return PyErr_Occurred() ? FAILED : READ;
    (*fields)++;
    return value == Py_None || PyUnicode_CheckExact(value) ? READ : DECLINE;
}

static int client_tags(PyObject *spec, Py_ssize_t *fields) {
    PyObject *tags = PyDict_GetItemWithError(spec, CLIENT_TAGS);
    if (tags == NULL)
        return PyErr_Occurred() ? FAILED : READ;
    (*fields)++;
    if (tags == Py_None)
        return READ;
    if (!PyDict_CheckExact(tags))
        return DECLINE;
    Py_ssize_t cursor = 0;
    PyObject *key, *value;
    while (PyDict_Next(tags, &cursor, &key, &value))
        if (!PyUnicode_CheckExact(key) || !PyUnicode_CheckExact(value))
            return DECLINE;
    return READ;
}

static int read_member(PyObject *spec, int64_t member, Tasks *tasks, PyObject *processes, PyObject *number_of,
                       Column *member_process) {
    if (!PyDict_CheckExact(spec))
        return DECLINE;
    PyObject *process = PyDict_GetItemWithError(spec, PROCESS_ID);
    if (process == NULL)
        return PyErr_Occurred() ? FAILED : DECLINE;
    if (!PyUnicode_CheckExact(process))
        return DECLINE;
    PyObject *known = PyDict_GetItemWithError(number_of, process);
    int64_t number;
    if (known != NULL) {
        number = PyLong_AsLongLong(known);
    } else {
        if (PyErr_Occurred())
            return FAILED;
        number = PyList_GET_SIZE(processes);
        PyObject *boxed = PyLong_FromLongLong(number);
        int failed = boxed == NULL || PyDict_SetItem(number_of, process, boxed) < 0 ||
                     PyList_Append(processes, process) < 0;
        Py_XDECREF(boxed);
        if (failed)
            return FAILED;
    }
    if (column_push(member_process, number) < 0)
        return FAILED;
    Py_ssize_t fields = 1;
    if (PyDict_GET_SIZE(spec) == 1)
        return READ;
    for (int k = 0; k < 3; k++) {
        PyObject *held = PyDict_GetItemWithError(spec, KINDS[k]);
        if (held == NULL) {
            if (PyErr_Occurred())
                return FAILED;
            continue;
        }
        fields++;
        if (held == Py_None)
            continue;
        int outcome = read_tasks(tasks, held, member, k);
        if (outcome != READ)
            return outcome;
    }
    if (fields == PyDict_GET_SIZE(spec))
        return READ;
    PyObject *sums = PyDict_GetItemWithError(spec, OFFSET_SUMS);
    if (sums == NULL && PyErr_Occurred())
        return FAILED;
    if (sums != NULL) {
        fields++;
        if (sums != Py_None) {
            tasks->reported = 1;
            int outcome = read_offset_sums(tasks, sums, member);
            if (outcome != READ)
                return outcome;
        }
    }
    if (fields == PyDict_GET_SIZE(spec))
        return READ;
    int outcome;
    if ((outcome = optional_text(spec, INSTANCE_ID, &fields)) != READ ||
        (outcome = optional_text(spec, RACK, &fields)) != READ || (outcome = client_tags(spec, &fields)) != READ)
        return outcome;
    return fields == PyDict_GET_SIZE(spec) ? READ : DECLINE; /* another field: the Python reader names it */
}

static PyObject *read_members(PyObject *module, PyObject *args) {
    PyObject *members, *position, *starts_list;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &members, &PyDict_Type, &position, &PyList_Type,
                          &starts_list))
        return NULL;
    if (!PyDict_CheckExact(members))
        Py_RETURN_NONE;
    Tasks tasks = {position, NULL, PyList_GET_SIZE(starts_list) - 1, {0}, {0}, {0}, 0, {0}, {0}, {0}};
    Column member_process = {0};
    PyObject *processes = PyList_New(0), *number_of = PyDict_New(), *result = NULL;
    int outcome = processes == NULL || number_of == NULL ? FAILED : READ;
    if (outcome == READ && tasks.subtopologies < 0)
        outcome = DECLINE;
    if (outcome == READ) {
        tasks.starts = PyMem_Malloc((size_t)(tasks.subtopologies + 1) * sizeof(int64_t));
        if (tasks.starts == NULL) {
            PyErr_NoMemory();
            outcome = FAILED;
        }
    }
    for (Py_ssize_t s = 0; outcome == READ && s <= tasks.subtopologies; s++) {
        tasks.starts[s] = PyLong_AsLongLong(PyList_GET_ITEM(starts_list, s));
        if (tasks.starts[s] == -1 && PyErr_Occurred())
            outcome = FAILED;
    }
    Py_ssize_t cursor = 0;
    PyObject *member_id, *spec;
    int64_t member = 0;
    while (outcome == READ && PyDict_Next(members, &cursor, &member_id, &spec)) {
        outcome = PyUnicode_CheckExact(member_id) ? read_member(spec, member, &tasks, processes, number_of,
                                                                &member_process)
                                                  : DECLINE;
        member++;
    }
    if (outcome == READ) {
        PyObject *columns[7] = {column_bytes(member_process.values, member_process.length),
                                column_bytes(tasks.task.values, tasks.task.length),
                                column_bytes(tasks.owner.values, tasks.owner.length),
                                column_bytes(tasks.kind.values, tasks.kind.length), NULL, NULL, NULL};
        PyObject *offsets = Py_NewRef(Py_None);
        if (tasks.reported) {
            columns[4] = column_bytes(tasks.offset_task.values, tasks.offset_task.length);
            columns[5] = column_bytes(tasks.offset_member.values, tasks.offset_member.length);
            columns[6] = column_bytes(tasks.offset_sum.values, tasks.offset_sum.length);
            Py_SETREF(offsets, columns[4] && columns[5] && columns[6]
                                   ? PyTuple_Pack(3, columns[4], columns[5], columns[6]) : NULL);
        }
        if (columns[0] && columns[1] && columns[2] && columns[3] && offsets)
            result = PyTuple_Pack(6, columns[0], processes, columns[1], columns[2], columns[3], offsets);
        Py_XDECREF(offsets);
        for (int i = 0; i < 7; i++)
            Py_XDECREF(columns[i]);
    } else if (outcome == DECLINE) {
        result = Py_NewRef(Py_None);
    }
    PyMem_Free(tasks.starts);
    PyMem_Free(tasks.task.values);
    PyMem_Free(tasks.owner.values);
    PyMem_Free(tasks.kind.values);
    PyMem_Free(tasks.offset_task.values);
    PyMem_Free(tasks.offset_member.values);
    PyMem_Free(tasks.offset_sum.values);
    PyMem_Free(member_process.values);
    Py_XDECREF(processes);
    Py_XDECREF(number_of);
    return result;
}

/* ---------------------------------------------------------------------------------------------- */
/* build_answer                                                                                    */

typedef struct {
    Py_buffer member, sub, partition;
    Py_ssize_t rows;
} Rows;

static int open_rows(PyObject *columns, Rows *rows) {
    rows->member.obj = rows->sub.obj = rows->partition.obj = NULL;
    if (!PyTuple_Check(columns) || PyTuple_GET_SIZE(columns) != 3) {
        PyErr_SetString(PyExc_TypeError, "expected (member, sub, partition) columns");
        return -1;
    }
    Py_buffer *views[3] = {&rows->member, &rows->sub, &rows->partition};
    for (int i = 0; i < 3; i++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(columns, i), views[i], PyBUF_C_CONTIGUOUS) < 0)
            return -1;
        if (views[i]->len % (Py_ssize_t)sizeof(int64_t) != 0 || views[i]->len != views[0]->len) {
            PyErr_SetString(PyExc_ValueError, "columns of int64 of one length expected");
            return -1;
        }
    }
    rows->rows = rows->member.len / (Py_ssize_t)sizeof(int64_t);
    return 0;
}

static void close_rows(Rows *rows) {
    Py_buffer *views[3] = {&rows->member, &rows->sub, &rows->partition};
    for (int i = 0; i < 3; i++)
        if (views[i]->obj != NULL)
            PyBuffer_Release(views[i]);
}

/* maps[m] (a new dict, or NULL for none yet) gets {sids[sub]: [partitions]} for each group of rows. */
static int fill_maps(Rows *rows, PyObject **maps, Py_ssize_t members, PyObject *sids) {
    const int64_t *member = rows->member.buf, *sub = rows->sub.buf, *partition = rows->partition.buf;
    Py_ssize_t subtopologies = PyTuple_GET_SIZE(sids);
    for (Py_ssize_t low = 0, high; low < rows->rows; low = high) {
        for (high = low + 1; high < rows->rows && member[high] == member[low] && sub[high] == sub[low]; high++)
            ;
        if (member[low] < 0 || member[low] >= members || sub[low] < 0 || sub[low] >= subtopologies) {
            PyErr_SetString(PyExc_IndexError, "member or subtopology number out of range");
            return -1;
        }
        PyObject **map = &maps[member[low]];
        if (*map == NULL && (*map = PyDict_New()) == NULL)
            return -1;
        PyObject *list = PyList_New(high - low);
        if (list == NULL)
            return -1;
        int failed = PyDict_SetItem(*map, PyTuple_GET_ITEM(sids, sub[low]), list) < 0;
        Py_DECREF(list); /* the dict owns it now (or it is gone) */
        for (Py_ssize_t i = low; !failed && i < high; i++) {
            PyObject *number = PyLong_FromLongLong(partition[i]);
            if (number == NULL)
                failed = 1;
            else
                PyList_SET_ITEM(list, i - low, number);
        }
        if (failed)
            return -1;
    }
    return 0;
}

/* Member ids sorted as Python sorts strs: code point by code point, a prefix first. Two 1-byte strs
 * (ASCII or Latin-1: one byte per code point) compare as bytes; any other pair as PyUnicode_Compare does. */
typedef struct {
    PyObject *id;
    Py_ssize_t position;
} Named;

static int by_id(const void *a, const void *b) {
    PyObject *x = ((const Named *)a)->id, *y = ((const Named *)b)->id;
    if (PyUnicode_KIND(x) == PyUnicode_1BYTE_KIND && PyUnicode_KIND(y) == PyUnicode_1BYTE_KIND) {
        Py_ssize_t m = PyUnicode_GET_LENGTH(x), n = PyUnicode_GET_LENGTH(y);
        int c = memcmp(PyUnicode_1BYTE_DATA(x), PyUnicode_1BYTE_DATA(y), (size_t)(m < n ? m : n));
        return c != 0 ? c : (m > n) - (m < n);
    }
    return PyUnicode_Compare(x, y); /* strs: no error */
}

/* `map`, given away, or a new empty dict where there is none. */
static PyObject *or_empty(PyObject *map) {
    return map != NULL ? map : PyDict_New();
}

static PyObject *build_answer(PyObject *module, PyObject *args) {
    PyObject *member_ids, *sids, *active_columns, *standby_columns;
    if (!PyArg_ParseTuple(args, "O!O!OO", &PyTuple_Type, &member_ids, &PyTuple_Type, &sids, &active_columns,
                          &standby_columns))
        return NULL;
    Py_ssize_t members = PyTuple_GET_SIZE(member_ids);
    for (Py_ssize_t i = 0; i < members; i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(member_ids, i))) {
            PyErr_SetString(PyExc_TypeError, "member ids must be strs");
            return NULL;
        }
    Named *order = PyMem_Malloc((size_t)(members + 1) * sizeof(Named));
    PyObject **maps = PyMem_Calloc((size_t)(2 * members + 1), sizeof(PyObject *));
    if (order == NULL || maps == NULL) {
        PyMem_Free(order);
        PyMem_Free(maps);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < members; i++)
        order[i] = (Named){PyTuple_GET_ITEM(member_ids, i), i};
    qsort(order, (size_t)members, sizeof(Named), by_id);
    Rows active = {0}, standby = {0};
    PyObject *answer = NULL;
    int failed = open_rows(active_columns, &active) < 0 || open_rows(standby_columns, &standby) < 0 ||
                 fill_maps(&active, maps, members, sids) < 0 || fill_maps(&standby, maps + members, members, sids) < 0;
    if (!failed)
        failed = (answer = PyDict_New()) == NULL;
    for (Py_ssize_t i = 0; !failed && i < members; i++) {
        Py_ssize_t m = order[i].position;
        PyObject *kinds = PyDict_New();
        if (kinds == NULL || PyDict_SetItem(answer, order[i].id, kinds) < 0) {
            Py_XDECREF(kinds);
            failed = 1;
            break;
        }
        Py_DECREF(kinds); /* owned by the answer */
        PyObject *values[3] = {or_empty(maps[m]), or_empty(maps[members + m]), PyDict_New()};
        maps[m] = maps[members + m] = NULL; /* given away */
        PyObject *names[3] = {ACTIVE, STANDBY, WARMUP};
        for (int k = 0; k < 3; k++) {
            if (values[k] == NULL || PyDict_SetItem(kinds, names[k], values[k]) < 0)
                failed = 1;
            Py_XDECREF(values[k]);
        }
    }
    close_rows(&active);
    close_rows(&standby);
    for (Py_ssize_t i = 0; i < 2 * members; i++)
        Py_XDECREF(maps[i]);
    PyMem_Free(maps);
    PyMem_Free(order);
    if (failed) {
        Py_XDECREF(answer);
        return NULL;
    }
    return answer;
}

static PyMethodDef methods[] = {
    {"read_members", read_members, METH_VARARGS,
     "read_members(members, position, starts): the members' columns, or None where the Python reader decides."},
    {"build_answer", build_answer, METH_VARARGS,
     "build_answer(member_ids, sids, active, standby): the streams group's answer dict."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "kassign.groups.streams._native",
                                        "A streams group's dict edges in C.", -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    PROCESS_ID = PyUnicode_InternFromString("process_id");
    KINDS[0] = ACTIVE = PyUnicode_InternFromString("active");
    KINDS[1] = STANDBY = PyUnicode_InternFromString("standby");
    KINDS[2] = WARMUP = PyUnicode_InternFromString("warmup");
    INSTANCE_ID = PyUnicode_InternFromString("instance_id");
    RACK = PyUnicode_InternFromString("rack");
    CLIENT_TAGS = PyUnicode_InternFromString("client_tags");
    OFFSET_SUMS = PyUnicode_InternFromString("offset_sums");
    if (!PROCESS_ID || !ACTIVE || !STANDBY || !WARMUP || !INSTANCE_ID || !RACK || !CLIENT_TAGS || !OFFSET_SUMS)
        return NULL;
    return PyModule_Create(&module_def);
}
