/* A growable int64 column, handed to Python as a bytearray (numpy views it without a copy): the one
 * definition both of kassign's C extensions (kassign._native, kassign.groups.streams._native) build on.
 * Include after <Python.h> and <stdint.h>. */
#ifndef KASSIGN_COLUMN_H
#define KASSIGN_COLUMN_H

#define JAVA_INT_MAX 2147483647LL

typedef struct {
    int64_t *values;
    Py_ssize_t length, capacity;
} Column;

/* Appends `value`; -1 with MemoryError set when the column cannot grow. */
static int column_push(Column *column, int64_t value) {
    if (column->length == column->capacity) {
        Py_ssize_t capacity = column->capacity ? 2 * column->capacity : 64;
        int64_t *grown = PyMem_Realloc(column->values, (size_t)capacity * sizeof(int64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        column->values = grown;
        column->capacity = capacity;
    }
    column->values[column->length++] = value;
    return 0;
}

/* `length` int64 values as a new bytearray (NULL with an exception set on failure). */
static PyObject *column_bytes(const int64_t *values, Py_ssize_t length) {
    return PyByteArray_FromStringAndSize((const char *)values, length * (Py_ssize_t)sizeof(int64_t));
}

#endif
