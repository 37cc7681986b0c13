"""MN-VER traceability: which test verifies which requirement.

The requirements live in a SysML v2 model (``sysml-models/`` by default); each
has a short id such as ``MN-REQ-03``. A test says what it verifies with
``@pytest.mark.req("MN-REQ-03", ...)`` (on the function, a class, or a module's
``pytestmark``). This module joins the two, in two roles:

*A pytest plugin* (``pytest_plugins = ["memnet.ver"]`` in a conftest, or
``-p memnet.ver``). After collection it checks the marks:

* a test that names an id the model does not hold stops the run with a usage
  error naming the test and the id;
* every test under a directory called ``ver`` (the MN-VER suite) must name at
  least one requirement;
* when the run collects the whole suite, every requirement must be named by at
  least one test. A run is *whole* when ``--memnet-ver`` is given, or when each
  path it was given is the rootdir or one of the configured ``testpaths`` (no
  path at all means the same) and ``--lf`` is off. ``pytest tests/gql`` or
  ``pytest tests/x.py::test_y`` are partial and skip this one check. ``-k``,
  ``-m`` and ``--deselect`` do not make a run partial: the check looks at
  everything collected, before deselection.

Options: ``--memnet-models=DIR`` (default ``$MEMNET_VER_MODELS``, else
``<rootdir>/sysml-models`` when it exists; with neither the plugin stays
quiet), ``--memnet-ver`` (print the requirement × test matrix once collection
is done) and ``--memnet-ver-json=FILE`` (write the trace as JSON, see
:meth:`Trace.to_dict`; it is written before any failure is raised). Give the
two values with ``=``: pytest settles its rootdir before a conftest's plugin
options are known, so a value after a space is first read as a path to test.

*A library* for ``memnet ver``: :func:`collect` runs pytest's collection in a
subprocess and returns a :class:`Trace`; :func:`format_matrix` renders it;
:func:`commit_trace` writes it into a session (``memnet ver --commit SID``): a
``TEST`` node per test file whose tests name a requirement, with a ``VERIFIES``
link to each requirement they name (the link lists the tests), so a Recall on
a requirement shows the tests that verify it. It is an ingest
(:func:`memnet.ingest.sync`): running it again changes only what changed.

This module imports pytest, so only pytest and the ``memnet ver`` command load
it; nothing else in ``memnet`` depends on it.
"""

from __future__ import annotations

from .plugin import (
    is_whole_run,
    pytest_addoption,
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_configure,
    requirements_of,
)
from .trace import (
    DEFAULT_MODELS,
    ENV_MODELS,
    MARKER,
    REQUIREMENT_KINDS,
    TEST_KIND,
    TEST_SCHEME,
    VER_DIR,
    Trace,
    build_trace,
    collect,
    commit_trace,
    default_models,
    format_matrix,
    id_key,
    load_model,
    requirement_nodes,
    trace_artefacts,
)

__all__ = [
    "pytest_addoption",
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "DEFAULT_MODELS",
    "ENV_MODELS",
    "MARKER",
    "REQUIREMENT_KINDS",
    "TEST_KIND",
    "TEST_SCHEME",
    "VER_DIR",
    "Trace",
    "build_trace",
    "collect",
    "commit_trace",
    "default_models",
    "format_matrix",
    "id_key",
    "is_whole_run",
    "load_model",
    "requirement_nodes",
    "requirements_of",
    "trace_artefacts",
]
