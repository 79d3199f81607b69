"""The compiled parts: kassign._native (src/kassign/_native.c), the dict API's edges in C, and
kassign.groups.streams._native, a streams group's.

Optional: where no C compiler or Python headers are found the build says so and goes on, and
kassign uses its pure-Python readers and builders instead (same results; see kassign/_accel.py).
Everything else is declared in pyproject.toml."""

from setuptools import Extension, setup

FLAGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]

SHARED = ["src/kassign/_column.h"]  # included by both: a change rebuilds both

setup(ext_modules=[Extension("kassign._native", ["src/kassign/_native.c"], depends=SHARED, optional=True,
                             extra_compile_args=FLAGS),
                   Extension("kassign.groups.streams._native", ["src/kassign/groups/streams/_native.c"],
                             depends=SHARED, optional=True, extra_compile_args=FLAGS)])
