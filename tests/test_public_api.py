"""The public surface: what ``import memnet`` offers, and the error tree."""

from __future__ import annotations

import inspect

import memnet
import memnet.errors as errors


def _error_classes() -> list[type[errors.MemNetError]]:
    return [
        c
        for _, c in inspect.getmembers(errors, inspect.isclass)
        if issubclass(c, errors.MemNetError) and c.__module__ == "memnet.errors"
    ]


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert memnet.__all__ == sorted(memnet.__all__)
    assert len(set(memnet.__all__)) == len(memnet.__all__)
    for name in memnet.__all__:
        assert getattr(memnet, name) is not None, name
    assert errors.__all__ == sorted(errors.__all__)


def test_every_error_class_is_public_and_lives_in_errors() -> None:
    classes = _error_classes()
    assert len(classes) > 20
    for cls in classes:
        assert cls.__name__ in memnet.__all__, cls.__name__
        assert cls.__name__ in errors.__all__, cls.__name__
        assert getattr(memnet, cls.__name__) is cls
    # no module outside errors.py defines an error class of its own
    import importlib
    import pkgutil

    for info in pkgutil.walk_packages(memnet.__path__, "memnet."):
        if info.name == "memnet.__main__":
            continue
        mod = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(mod, inspect.isclass):
            if issubclass(obj, errors.MemNetError):
                assert obj.__module__ == "memnet.errors", f"{obj.__name__} in {info.name}"


def test_every_code_has_a_class_and_every_class_a_known_code() -> None:
    classes = _error_classes()
    codes = {cls.code for cls in classes}
    assert codes <= set(errors.CODES), codes - set(errors.CODES)
    assert set(errors.CODES) <= codes, set(errors.CODES) - codes


def test_the_drawn_tree_names_every_class_under_its_parent() -> None:
    doc = errors.__doc__ or ""
    tree = doc[doc.index("Hierarchy::") : doc.index("Example::")]
    depth_of: dict[str, int] = {}
    stack: list[str] = []
    for line in tree.splitlines()[1:]:
        if not line.strip():
            continue
        body = line.lstrip(" │├└─")
        name = body.split()[0]
        depth = (len(line) - len(body) - 4) // 4
        depth_of[name] = depth
        del stack[depth:]
        if stack:
            parent = getattr(errors, stack[-1])
            assert issubclass(getattr(errors, name), parent), (name, stack[-1])
        stack.append(name)
    assert set(depth_of) == {c.__name__ for c in _error_classes()}


def test_invalid_argument_is_a_value_error_with_its_code() -> None:
    e = errors.InvalidArgument("bad")
    assert isinstance(e, ValueError) and e.code == "invalid_argument"
