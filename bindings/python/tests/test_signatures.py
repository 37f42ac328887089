"""test_signatures.py -- inspect.signature works on every public method,
class and function of ravel (the C methods carry __text_signature__ in
their docstrings), and each agrees with the type stub _ravel.pyi in its
parameters' names, kinds and defaults; help() shows them."""
import ast
import inspect
import os
import pydoc

import pytest

import ravel
import ravel._ravel

STUB = os.path.join(os.path.dirname(ravel._ravel.__file__), "_ravel.pyi")

CLASSES = [ravel.DB, ravel.Snapshot, ravel.Iterator, ravel.RangeIterator,
           ravel.Batch, ravel.Options, ravel.Cache, ravel.WriteController,
           ravel.Transaction, ravel.Updates, ravel.SstWriter]
CONSTRUCTIBLE = [ravel.DB, ravel.Batch, ravel.Options, ravel.Cache,
                 ravel.WriteController, ravel.SstWriter]


def public_methods(cls):
    """(name, method) of CLS's own methods: public ones, __enter__ and
    __exit__."""
    for name, member in vars(cls).items():
        if not callable(member) or isinstance(member, type):
            continue
        if name.startswith("_") and name not in ("__enter__", "__exit__"):
            continue
        if type(member).__name__ in ("wrapper_descriptor",
                                     "method-wrapper"):
            continue    # slots (__getitem__, __iter__, ...) are the type's
        yield name, getattr(cls, name)


def stub_functions():
    """{(class name or None, function name): ast.FunctionDef} of the stub,
    leaving out overloaded functions (their runtime signature is the union
    of the overloads: mypy's stubtest checks those)."""
    tree = ast.parse(open(STUB).read())
    found, overloaded = {}, set()

    def visit(body, owner):
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, node.name)
            elif isinstance(node, ast.FunctionDef):
                key = (owner, node.name)
                if any(getattr(d, "id", None) == "overload"
                       for d in node.decorator_list):
                    overloaded.add(key)
                found[key] = node
    visit(tree.body, None)
    return {k: v for k, v in found.items() if k not in overloaded}


STUBS = stub_functions()


def stub_parameters(fn, drop_first):
    """[(name, kind, default)] of a stub function, as inspect names them."""
    a = fn.args
    positional = [(p, inspect.Parameter.POSITIONAL_ONLY) for p in a.posonlyargs]
    positional += [(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults
    out = []
    for (p, kind), d in zip(positional, defaults):
        out.append((p.arg, kind, ast.literal_eval(d) if d else
                    inspect.Parameter.empty))
    if a.vararg:
        out.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL,
                    inspect.Parameter.empty))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, inspect.Parameter.KEYWORD_ONLY,
                    ast.literal_eval(d) if d else inspect.Parameter.empty))
    if a.kwarg:
        out.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD,
                    inspect.Parameter.empty))
    return out[1:] if drop_first else out


def runtime_parameters(sig):
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


METHODS = [(cls, name, m) for cls in CLASSES
           for name, m in public_methods(cls)]


def test_every_class_has_methods_listed():
    names = {(c.__name__, n) for c, n, _ in METHODS}
    for want in [("DB", "get"), ("DB", "update"), ("DB", "items"),
                 ("Snapshot", "keys"), ("Iterator", "seek"),
                 ("RangeIterator", "close"), ("Batch", "put"),
                 ("Options", "parse"), ("DB", "__exit__"),
                 ("Transaction", "commit"), ("DB", "transact")]:
        assert want in names


@pytest.mark.parametrize("cls,name,method", METHODS,
                         ids=["%s.%s" % (c.__name__, n) for c, n, _ in METHODS])
def test_method_signature(cls, name, method):
    sig = inspect.signature(method)     # raises ValueError without one
    params = list(sig.parameters.values())
    stub = STUBS.get((cls.__name__, name))
    if type(vars(cls)[name]).__name__ == "classmethod_descriptor":
        # bound to the class already (Batch.from_bytes): no cls to drop
        assert runtime_parameters(sig) == stub_parameters(stub, True)
        return
    assert params and params[0].name == "self"
    if stub is None:
        assert name in ("get", "get_for_update"), \
            "%s.%s is missing from the stub" % (
            cls.__name__, name)
        return
    assert runtime_parameters(sig)[1:] == stub_parameters(stub, True)
    # bound to an instance, self is gone
    assert str(sig).startswith("(self")


@pytest.mark.parametrize("cls", CONSTRUCTIBLE, ids=lambda c: c.__name__)
def test_class_signature(cls):
    sig = inspect.signature(cls)
    stub = STUBS.get((cls.__name__, "__init__")) or \
        STUBS[(cls.__name__, "__new__")]
    assert runtime_parameters(sig) == stub_parameters(stub, True)


def test_function_signatures():
    assert str(inspect.signature(ravel.errstr)) == "(code, /)"
    assert runtime_parameters(inspect.signature(ravel.errstr)) == \
        stub_parameters(STUBS[(None, "errstr")], False)
    assert str(inspect.signature(ravel.destroy)) == "(path, /)"
    assert runtime_parameters(inspect.signature(ravel.destroy)) == \
        stub_parameters(STUBS[(None, "destroy")], False)
    assert ravel.destroy.__doc__.startswith("Deletes the database")
    for fn in (ravel.backup_list, ravel.backup_info, ravel.backup_verify,
               ravel.backup_restore, ravel.backup_purge,
               ravel.restore_backup, ravel.repair):
        assert runtime_parameters(inspect.signature(fn)) == \
            stub_parameters(STUBS[(None, fn.__name__)], False)
    # open() is Python and mirrors DB()
    assert [p for p in runtime_parameters(inspect.signature(ravel.open))] == \
        runtime_parameters(inspect.signature(ravel.DB))


def test_bound_and_help(db):
    assert str(inspect.signature(db.get)) == "(key, /, default=None)"
    assert str(inspect.signature(db.put)) == \
        "(key, value, /, *, sync=False, disable_wal=False, no_slowdown=False)"
    assert str(inspect.signature(db.items)) == \
        "(start=None, stop=None, reverse=False, *, prefix=None, " \
        "snapshot=None)"
    text = pydoc.render_doc(ravel.DB, renderer=pydoc.plaintext)
    assert "update(self, other=(), /, *, sync=False" in text
    # the signature is not repeated as the docstring's first line
    assert ravel.DB.get.__doc__.startswith("The value of KEY")


def test_range_iterator_is_subscriptable_at_run_time(db):
    # as the stub declares it generic: annotations evaluated at run time
    def keys_of(d: ravel.DB) -> ravel.RangeIterator[bytes]:
        return d.keys()
    assert keys_of.__annotations__["return"].__origin__ is ravel.RangeIterator
    assert isinstance(keys_of(db), ravel.RangeIterator)
