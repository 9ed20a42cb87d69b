"""The static call graph: which public functions reach a function through direct calls, on
inline packages for each rule, then on real torch modules checked by hand."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from extractor.calls import CallGraph, call_graph, summarise
from extractor.imports import ModuleName
from extractor.model import FileResult, ScanReport


def _package(root: Path, files: dict[str, str]) -> ScanReport:
    """Write `files` under `root` and a report listing them, as a scan of them would."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return ScanReport(tuple(FileResult(relative) for relative in sorted(files)))


def _graph(root: Path, files: dict[str, str], cache: Path | None = None) -> CallGraph:
    return call_graph(_package(root, files), cwd=root, cache_dir=cache, jobs=1)


def _callers(graph: CallGraph, path: str, qualname: str, depth: int = 3) -> list[tuple[str, int]]:
    found = graph.callers(path, qualname, depth)
    assert found is not None, (path, qualname)
    return [(caller.name, caller.depth) for caller in found.callers]


def test_plain_names_reach_through_private_helpers(tmp_path: Path) -> None:
    """Calls by plain name link functions of a module; private ones are followed, not listed."""
    graph = _graph(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/stock.py": """\
                def _check(n):
                    raise ValueError(n)

                def _take(n):
                    return _check(n)

                def take(n):
                    return _take(n)

                def sell(n):
                    take(n)
                """,
        },
    )
    assert _callers(graph, "shop/stock.py", "_check") == [
        ("shop.stock.take", 2),
        ("shop.stock.sell", 3),
    ]
    found = graph.callers("shop/stock.py", "_check")
    assert found is not None
    assert found.function == "shop.stock._check"
    assert not found.public
    assert graph.callers("shop/stock.py", "nowhere") is None


def test_imports_and_reexports_are_followed(tmp_path: Path) -> None:
    """`module.function` through imports, names imported from a module, and re-exports from
    a package's `__init__` (by name and by `import *`) all reach the definition."""
    graph = _graph(
        tmp_path,
        {
            "shop/__init__.py": "from .stock import take\nfrom .prices import *\n",
            "shop/stock.py": "def take(n):\n    raise ValueError(n)\n",
            "shop/prices.py": "def price(n):\n    raise ValueError(n)\n",
            "shop/cart.py": """\
                import shop
                import shop.stock as stock
                from shop import stock as again
                from .stock import take

                def one():
                    stock.take(1)

                def two():
                    again.take(2)

                def three():
                    take(3)

                def four():
                    shop.take(4)

                def five():
                    shop.price(5)
                """,
        },
    )
    assert _callers(graph, "shop/stock.py", "take") == [
        ("shop.cart.four", 1),
        ("shop.cart.one", 1),
        ("shop.cart.three", 1),
        ("shop.cart.two", 1),
    ]
    assert _callers(graph, "shop/prices.py", "price") == [("shop.cart.five", 1)]


def test_methods_through_self_bases_super_and_constructors(tmp_path: Path) -> None:
    """`self.m()` finds the class's method or a single base's; `super().m()` starts at the base;
    calling a class reaches its `__init__`; a class with several bases stops the search."""
    graph = _graph(
        tmp_path,
        {
            "zoo/__init__.py": "",
            "zoo/animals.py": """\
                class Animal:
                    def __init__(self, name):
                        self._validate(name)

                    def _validate(self, name):
                        raise ValueError(name)

                    def rename(self, name):
                        self._validate(name)


                class Dog(Animal):
                    def __init__(self, name):
                        super().__init__(name)

                    def bark(self):
                        self.rename("rex")


                class Mixed(Animal, dict):
                    def run(self):
                        self.rename("x")


                def adopt():
                    return Dog("rex")
                """,
        },
    )
    assert _callers(graph, "zoo/animals.py", "Animal._validate") == [
        ("zoo.animals.Animal.__init__", 1),
        ("zoo.animals.Animal.rename", 1),
        ("zoo.animals.Dog.__init__", 2),
        ("zoo.animals.Dog.bark", 2),
        ("zoo.animals.adopt", 3),
    ]
    assert _callers(graph, "zoo/animals.py", "Animal.rename") == [("zoo.animals.Dog.bark", 1)]


def test_nested_functions_are_reached_but_never_public(tmp_path: Path) -> None:
    """A nested function called by name links to its enclosing function; it is not public."""
    graph = _graph(
        tmp_path,
        {
            "m.py": """\
                def outer(x):
                    def check():
                        raise ValueError(x)
                    def relay():
                        check()
                    relay()
                """
        },
    )
    assert _callers(graph, "m.py", "outer.check") == [("m.outer", 2)]


def test_what_cannot_be_seen_is_not_followed(tmp_path: Path) -> None:
    """Callbacks, lambdas, attributes of other objects, `getattr`, shadowing names and calls
    at import time give no edge."""
    graph = _graph(
        tmp_path,
        {
            "m.py": """\
                def target():
                    raise ValueError

                def via_lambda(run):
                    run(lambda: target())

                def via_callback(run):
                    run(target)

                def via_object(other):
                    other.target()

                def via_getattr(mod):
                    getattr(mod, "target")()

                def via_parameter(target):
                    target()

                def via_comprehension(fs):
                    return [target() for target in fs]

                target()
                """
        },
    )
    assert _callers(graph, "m.py", "target") == []


def test_methods_on_values_whose_class_the_function_states(tmp_path: Path) -> None:
    """A parameter annotated with a class (plain, dotted, quoted, Optional, `| None`) and never
    rebound, or a local bound once by calling a class or under its annotation, reaches that
    class's methods (its bases' too). Rebinding, a second assignment or an unannotated
    parameter gives no edge, nor does a function's return value."""
    graph = _graph(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/engine.py": """\
                class Base:
                    def _check(self, n):
                        raise ValueError(n)

                class Engine(Base):
                    def _run(self):
                        raise RuntimeError
                """,
            "pkg/api.py": """\
                from typing import Optional
                from pkg import engine
                from pkg.engine import Engine

                def annotated(e: Engine, n):
                    e._check(n)

                def dotted(e: engine.Engine):
                    e._run()

                def quoted(e: "Engine"):
                    e._run()

                def optional(e: Optional[Engine]):
                    e._run()

                def union(e: Engine | None):
                    e._run()

                def constructed(n):
                    e = Engine()
                    e._check(n)

                def declared(n):
                    e: Engine = make()
                    e._check(n)

                def rebound_parameter(e: Engine):
                    e = other()
                    e._check(1)

                def assigned_twice(n):
                    e = Engine()
                    e = other()
                    e._check(n)

                def unannotated(e):
                    e._run()

                def returned(n):
                    e = make()
                    e._run()

                def make():
                    return Engine()

                def other():
                    return None
                """,
        },
    )
    assert sorted(_callers(graph, "pkg/engine.py", "Base._check")) == [
        ("pkg.api.annotated", 1),
        ("pkg.api.constructed", 1),
        ("pkg.api.declared", 1),
    ]
    assert sorted(_callers(graph, "pkg/engine.py", "Engine._run")) == [
        ("pkg.api.dotted", 1),
        ("pkg.api.optional", 1),
        ("pkg.api.quoted", 1),
        ("pkg.api.union", 1),
    ]


def test_dunder_names_are_public_and_underscored_modules_are_not(tmp_path: Path) -> None:
    """`__init__` is public; anything in a `_private` module, class or function is not."""
    graph = _graph(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/_impl.py": "from pkg.api import core\n\ndef run():\n    core()\n",
            "pkg/api.py": """\
                def core():
                    raise ValueError

                class Box:
                    def __init__(self):
                        core()

                class _Hidden:
                    def open(self):
                        core()
                """,
        },
    )
    assert _callers(graph, "pkg/api.py", "core") == [("pkg.api.Box.__init__", 1)]


def test_the_depth_bound_is_reported(tmp_path: Path) -> None:
    """Callers further than the bound are not listed, and the answer says the bound was hit."""
    files = {
        "chain.py": """\
            def a():
                raise ValueError

            def b():
                a()

            def c():
                b()

            def d():
                c()

            def e():
                d()
            """
    }
    graph = _graph(tmp_path, files)
    shallow = graph.callers("chain.py", "a", depth=3)
    assert shallow is not None
    assert [(c.name, c.depth) for c in shallow.callers] == [
        ("chain.b", 1),
        ("chain.c", 2),
        ("chain.d", 3),
    ]
    assert shallow.bounded
    deep = graph.callers("chain.py", "a", depth=4)
    assert deep is not None
    assert [c.name for c in deep.callers][-1] == "chain.e"
    assert not deep.bounded


def test_a_private_function_without_public_callers_near_is_followed_further(
    tmp_path: Path,
) -> None:
    """Past the bound, a private function no public one reaches is followed on, up to six calls
    back, to the nearest public callers; the answer's depth says how far it looked."""
    files = {
        "chain.py": """\
            def _a():
                raise ValueError

            def _b():
                _a()

            def _c():
                _b()

            def _d():
                _c()

            def e():
                _d()

            def f():
                e()

            def _g():
                _a()

            def _h():
                _g()
            """,
        "far.py": """\
            def _one():
                raise ValueError

            def _two():
                _one()

            def _three():
                _two()

            def _four():
                _three()

            def _five():
                _four()

            def _six():
                _five()

            def _seven():
                _six()

            def eight():
                _seven()
            """,
        "loop.py": """\
            def _a():
                raise ValueError

            def _b():
                _a()
                _d()

            def _c():
                _b()

            def _d():
                _c()
            """,
    }
    graph = _graph(tmp_path, files)
    near = graph.callers("chain.py", "_a", depth=3)
    assert near is not None
    assert [(c.name, c.depth) for c in near.callers] == [("chain.e", 4)]
    assert (near.depth, near.bounded) == (4, True)
    far = graph.callers("far.py", "_one", depth=3)
    assert far is not None
    assert far.callers == ()
    assert (far.depth, far.bounded) == (6, True)
    # A cycle of private functions ends the search where it closes.
    looped = graph.callers("loop.py", "_a", depth=3)
    assert looped is not None
    assert (looped.callers, looped.depth, looped.bounded) == ((), 3, False)


def test_summaries_are_cached_by_content(tmp_path: Path) -> None:
    """A second graph reads the cached summaries; a changed file is summarised again."""
    cache = tmp_path / "cache"
    files = {"m.py": "def a():\n    raise ValueError\n\ndef b():\n    a()\n"}
    first = _graph(tmp_path / "src", files, cache)
    (folder,) = cache.glob("calls-*")
    assert len(list(folder.iterdir())) == 1
    again = _graph(tmp_path / "src", files, cache)
    assert _callers(again, "m.py", "a") == _callers(first, "m.py", "a") == [("m.b", 1)]
    changed = _graph(tmp_path / "src", {"m.py": "def a():\n    raise ValueError\n\ndef b():\n    pass\n"}, cache)  # fmt: skip
    assert _callers(changed, "m.py", "a") == []
    assert len(list(folder.iterdir())) == 2


def test_awkward_files_give_summaries_not_errors() -> None:
    """A file that does not parse has an empty summary; a module-level `global` is harmless."""
    assert summarise(b"def (:\n", ModuleName("bad", False))[2:] == ((), (), (), (), ())
    summary = summarise(b"global X\nX = 1\ndef f():\n    X.run()\n", ModuleName("ok", False))
    assert summary[2] == (("f", 3, False, (), 0, 0, ((), ())),)


def _torch_root() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


TORCH = _torch_root()


@pytest.fixture(scope="module")
def torch_graph() -> CallGraph:
    """The graph of torch.optim, torch.nn.modules and torch.nn.functional (a part of torch
    large enough for the cases below, small enough to summarise in a second or two)."""
    if TORCH is None:
        pytest.skip("torch is not installed (the `runtime` extra)")
    files = [
        path.relative_to(TORCH.parent).as_posix()
        for folder in ("optim", "nn/modules")
        for path in sorted((TORCH / folder).glob("*.py"))
    ]
    files += ["torch/nn/__init__.py", "torch/nn/functional.py", "torch/__init__.py"]
    report = ScanReport(tuple(FileResult(path) for path in sorted(files)))
    return call_graph(report, cwd=TORCH.parent, jobs=1)


def test_torch_adam_init_group_is_reached_from_step(torch_graph: CallGraph) -> None:
    """`Adam.step` calls `self._init_group(...)` (torch/optim/adam.py)."""
    found = torch_graph.callers("torch/optim/adam.py", "Adam._init_group")
    assert found is not None
    assert ("torch.optim.Adam.step", 1) in [(c.name, c.depth) for c in found.callers]


def test_torch_conv_subclasses_reach_convnd_through_super(torch_graph: CallGraph) -> None:
    """`Conv2d.__init__` calls `super().__init__(...)`, and `Conv2d` has one base, `_ConvNd`."""
    callers = _callers(torch_graph, "torch/nn/modules/conv.py", "_ConvNd.__init__")
    assert ("torch.nn.Conv2d.__init__", 1) in callers
    assert ("torch.nn.ConvTranspose2d.__init__", 2) in callers


def test_torch_batch_size_check_is_reached_through_the_functional_alias(
    torch_graph: CallGraph,
) -> None:
    """`batch_norm` calls `_verify_batch_size` by name; `SyncBatchNorm.forward` calls
    `F.batch_norm` with `from torch.nn import functional as F` (torch/nn/modules/batchnorm.py)."""
    callers = _callers(torch_graph, "torch/nn/functional.py", "_verify_batch_size")
    assert ("torch.nn.functional.batch_norm", 1) in callers
    assert ("torch.nn.SyncBatchNorm.forward", 2) in callers
    assert all(not name.split(".")[-2].startswith("_") for name, _ in callers)


def test_a_cached_scan_leaves_the_summaries_the_graph_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan with a cache stores each file's call summary, made from the tree it parsed: the
    call graph then parses nothing and finds what it would have found by parsing."""
    from extractor import calls
    from extractor.scan import scan_paths

    files = {
        "shop/__init__.py": "from shop.stock import take\n",
        "shop/stock.py": """\
            def _check(n):
                raise ValueError(n)

            def take(n):
                return _check(n)
            """,
    }
    _package(tmp_path, files)
    expected = _callers(_graph(tmp_path, files), "shop/stock.py", "_check")
    cache = tmp_path / "cache"
    monkeypatch.chdir(tmp_path)
    report = scan_paths(["shop"], cache_dir=cache, jobs=1)
    assert [result.path for result in report.results] == sorted(files)

    def no_parsing(data: bytes, module: ModuleName) -> object:
        raise AssertionError("the scan's summary was not used")

    monkeypatch.setattr(calls, "summarise", no_parsing)
    graph = call_graph(report, cwd=tmp_path, cache_dir=cache, jobs=1)
    assert _callers(graph, "shop/stock.py", "_check") == expected == [("shop.take", 1)]


def test_answers_for_the_same_code_are_kept_and_the_graph_is_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reaches` keeps the callers of every function a raise is in: the next run over the same
    bytes answers from them without building the graph; a question they do not hold builds
    it; changed code is a different graph, answered afresh."""
    from extractor import calls
    from extractor.scan import scan_paths

    files = {
        "shop/__init__.py": "from shop.stock import take\n",
        "shop/stock.py": """\
            def _check(n):
                if n < 0:
                    raise ValueError(n)

            def take(n):
                return _check(n)

            def count(n):
                return take(n)
            """,
    }
    _package(tmp_path, files)
    cache = tmp_path / "cache"
    monkeypatch.chdir(tmp_path)
    report = scan_paths(["shop"], cache_dir=cache, jobs=1)
    first = calls.reaches(report, cwd=tmp_path, cache_dir=cache, jobs=1)
    assert isinstance(first, CallGraph)
    expected = [("shop.take", 1), ("shop.stock.count", 2)]
    assert _callers(first, "shop/stock.py", "_check") == expected

    built: list[int] = []
    graph_init = CallGraph.__init__

    def counted(self: CallGraph, summaries: object) -> None:
        built.append(1)
        graph_init(self, summaries)  # type: ignore[arg-type]

    monkeypatch.setattr(CallGraph, "__init__", counted)
    again = calls.reaches(report, cwd=tmp_path, cache_dir=cache, jobs=1)
    assert isinstance(again, calls.KnownCallers)
    assert _callers(again, "shop/stock.py", "_check") == expected and built == []
    # Not kept (no raise in it, another depth): the graph is built once, and answers.
    assert _callers(again, "shop/stock.py", "take") == [("shop.stock.count", 1)]
    assert _callers(again, "shop/stock.py", "_check", depth=1) == [("shop.take", 1)]
    assert built == [1]

    (tmp_path / "shop" / "stock.py").write_text(
        "def _check(n):\n    raise ValueError(n)\n\ndef take(n):\n    return n\n",
        encoding="utf-8",
    )
    changed = scan_paths(["shop"], cache_dir=cache, jobs=1)
    answered = calls.reaches(changed, cwd=tmp_path, cache_dir=cache, jobs=1)
    assert isinstance(answered, CallGraph) and _callers(answered, "shop/stock.py", "_check") == []
    (kept,) = cache.glob(f"{calls.ANSWERS_PREFIX}*")
    assert len(list(kept.iterdir())) == 1


def test_a_class_that_inherits_its_constructor_reaches_the_bases_checks(tmp_path: Path) -> None:
    """`Dropout(p)` runs `_DropoutNd.__init__`: the subclass is listed as reaching it, a class
    with an `__init__` of its own is not, and neither is a class defined inside a function."""
    graph = _graph(
        tmp_path,
        {
            "nn/__init__.py": "",
            "nn/dropout.py": """\
                class _DropoutNd:
                    def __init__(self, p):
                        if p < 0:
                            raise ValueError("dropout probability has to be at least 0")


                class Dropout(_DropoutNd):
                    pass


                class Dropout2d(_DropoutNd):
                    def __init__(self, p):
                        self.p = p


                def factory():
                    class Local(_DropoutNd):
                        pass

                    return Local
                """,
        },
    )
    assert _callers(graph, "nn/dropout.py", "_DropoutNd.__init__") == [("nn.dropout.Dropout", 1)]


def test_a_method_a_class_inherits_reaches_the_classs_own_overrides(tmp_path: Path) -> None:
    """`InstanceNorm3d.forward` is `_InstanceNorm.forward`, whose `self._check_input_dim(x)`
    runs `InstanceNorm3d._check_input_dim`: the class's inherited method is listed as
    reaching its override, passing what the base's method passes, the code that runs said
    apart; a class defining the calling method itself, or not overriding, gets no such
    caller."""
    graph = _graph(
        tmp_path,
        {
            "nn/__init__.py": "",
            "nn/norm.py": """                class _InstanceNorm:
                    def _check_input_dim(self, input):
                        raise NotImplementedError

                    def forward(self, input):
                        self._check_input_dim(input)
                        return input


                class InstanceNorm3d(_InstanceNorm):
                    def _check_input_dim(self, input):
                        if input.dim() != 5:
                            raise ValueError("expected 5D input")


                class InstanceNorm1d(_InstanceNorm):
                    def _check_input_dim(self, input):
                        if input.dim() != 3:
                            raise ValueError("expected 3D input")

                    def forward(self, input):
                        return input


                class Plain(_InstanceNorm):
                    pass
                """,
        },
    )
    found = graph.callers("nn/norm.py", "InstanceNorm3d._check_input_dim")
    assert found is not None
    (caller,) = found.callers
    assert (caller.name, caller.depth, caller.passes) == (
        "nn.norm.InstanceNorm3d.forward",
        1,
        (("input", "input"),),
    )
    assert (caller.path, caller.line, caller.defined, caller.same_instance) == (
        "nn/norm.py",
        10,
        ("nn/norm.py", 5),
        True,
    )
    assert _callers(graph, "nn/norm.py", "InstanceNorm1d._check_input_dim") == []
    # `Plain` overrides nothing: its inherited `forward` is no caller of the base's method.
    assert _callers(graph, "nn/norm.py", "_InstanceNorm._check_input_dim") == []


def _passes(graph: CallGraph, path: str, qualname: str) -> dict[str, dict[str, str]]:
    found = graph.callers(path, qualname)
    assert found is not None, (path, qualname)
    return {caller.name: dict(caller.passes) for caller in found.callers}


def test_parameters_passed_on_unchanged_are_followed_to_public_callers(tmp_path: Path) -> None:
    """Each caller says which parameters of the function asked about receive its own
    parameters, unchanged, by position or keyword, through methods, constructors and
    classmethods; a parameter rebound before the call (or in a loop around it, or caught
    into), a computed argument (see `computes`, next test) and positions after `*args` pass
    nothing."""
    graph = _graph(
        tmp_path,
        {
            "opt/__init__.py": "",
            "opt/check.py": """\
                def _check_rate(rate, low=0.0, *, name="rate"):
                    if not low <= rate:
                        raise ValueError(name)

                def _check_via(rate):
                    _check_rate(rate)

                class Optimizer:
                    def __init__(self, params, lr, momentum=0):
                        self._validate(lr, low=momentum)

                    def _validate(self, value, low):
                        _check_rate(value, low)

                    def check_self(self):
                        _check_rate(self)

                    @classmethod
                    def build(cls, learning_rate):
                        return cls._make(learning_rate)

                    @classmethod
                    def _make(cls, rate):
                        _check_rate(rate)

                class SGD(Optimizer):
                    pass

                def rebinds(lr):
                    lr = float(lr)
                    _check_rate(lr)

                def computes(lr):
                    _check_rate(lr * 2, low=lr)

                def starred(args, lr):
                    _check_rate(*args, lr)

                def deep(speed):
                    _check_via(speed)

                def by_keyword(speed, floor):
                    _check_rate(low=floor, rate=speed, name=floor)

                def unbound(opt, value, low):
                    Optimizer._validate(opt, value, low)

                def rebinds_after(lr, floor):
                    _check_rate(lr, low=floor)
                    floor = 0

                def rebinds_in_loop(lr):
                    for _ in range(2):
                        _check_rate(lr)
                        lr = lr * 2

                def caught_as(lr):
                    _check_rate(lr)
                    try:
                        pass
                    except ValueError as lr:
                        pass
                """,
        },
    )
    passes = _passes(graph, "opt/check.py", "_check_rate")
    assert passes["opt.check.Optimizer.__init__"] == {"rate": "lr", "low": "momentum"}
    assert passes["opt.check.SGD"] == {"rate": "lr", "low": "momentum"}
    assert passes["opt.check.Optimizer.build"] == {"rate": "learning_rate"}
    assert passes["opt.check.rebinds"] == {}
    assert passes["opt.check.computes"] == {"low": "lr"}
    assert passes["opt.check.starred"] == {}
    assert passes["opt.check.deep"] == {"rate": "speed"}
    assert passes["opt.check.by_keyword"] == {"rate": "speed", "low": "floor", "name": "floor"}
    assert passes["opt.check.unbound"] == {"rate": "value", "low": "low"}
    assert passes["opt.check.Optimizer.check_self"] == {}
    # Bound again only after the call: the argument is still the caller's there.
    assert passes["opt.check.rebinds_after"] == {"rate": "lr", "low": "floor"}
    assert passes["opt.check.rebinds_in_loop"] == {}
    assert passes["opt.check.caught_as"] == {}


def test_arguments_computed_from_parameters_are_said_in_the_callers_parameters(
    tmp_path: Path,
) -> None:
    """An argument made of the caller's parameters and of names from outside it is carried
    as the expression, through locals bound once ahead of the call and through further
    callers (parenthesised as the grammar needs); locals bound twice, changed in place, bound
    by a loop or after the call, a nested function's arguments, packs of values and arguments
    reading no parameter are not."""
    graph = _graph(
        tmp_path,
        {
            "nn/__init__.py": "",
            "nn/conv.py": """\
                def _pair(x):
                    return (x, x)

                class _ConvNd:
                    def __init__(self, channels, stride, padding):
                        if padding == "same" and any(s != 1 for s in stride):
                            raise ValueError("strided same padding")

                class Conv2d(_ConvNd):
                    def __init__(self, channels, stride=1, padding=0):
                        stride_ = _pair(stride)
                        padding_ = padding if isinstance(padding, str) else _pair(padding)
                        super().__init__(channels, stride_, padding_)

                def scaled(size, s):
                    return Conv2d(size * 2, stride=s + 1)

                def twice(channels, stride):
                    step = _pair(stride)
                    step = _pair(step)
                    _ConvNd(channels, step, "same")

                def grown(channels, stride):
                    steps = [stride]
                    steps.append(1)
                    _ConvNd(channels, steps, "same")

                def looped(channels, strides):
                    for each in strides:
                        _ConvNd(channels, _pair(each), "same")

                def late(channels, stride):
                    if channels:
                        _ConvNd(channels, after, "same")
                    after = _pair(stride)

                def constant(channels):
                    _ConvNd(channels, _pair(1), "same")

                def enclosing(channels, stride):
                    def inner(c):
                        _ConvNd(c, _pair(stride), "same")
                    inner(channels)

                def packed(channels, stride):
                    _ConvNd(channels, (stride, stride), "same")

                def wordy(channels, stride):
                    _ConvNd(channels, _pair(stride) + _pair(stride) + _pair(stride) +
                            _pair(stride) + _pair(stride) + _pair(stride) + _pair(stride), 0)
                """,
        },
    )
    found = graph.callers("nn/conv.py", "_ConvNd.__init__")
    assert found is not None
    computes = {caller.name: caller.computes for caller in found.callers}
    passes = {caller.name: dict(caller.passes) for caller in found.callers}
    assert computes["nn.conv.Conv2d.__init__"] == (
        ("padding", "padding if isinstance(padding, str) else _pair(padding)", ("padding",)),
        ("stride", "_pair(stride)", ("stride",)),
    )
    assert passes["nn.conv.Conv2d.__init__"] == {"channels": "channels"}
    assert computes["nn.conv.scaled"] == (
        ("channels", "size * 2", ("size",)),
        ("stride", "_pair(s + 1)", ("s",)),
    )
    for refused in ("twice", "grown", "looped", "late", "constant", "enclosing", "packed", "wordy"):
        assert computes[f"nn.conv.{refused}"] == (), refused
    assert passes["nn.conv.twice"] == {"channels": "channels"}


def test_what_each_argument_depends_on_is_carried_where_no_exact_text_is(tmp_path: Path) -> None:
    """`feeds`: the caller's parameters each argument depends on, through locals bound in
    branches and parameters bound again, and through further callers; the instance is not
    a parameter a caller passes."""
    graph = _graph(
        tmp_path,
        {
            "ad/__init__.py": "",
            "ad/grad.py": """\
                def _make_grads(outputs, grads):
                    for out, grad in zip(outputs, grads):
                        if grad is None and out.numel() != 1:
                            raise RuntimeError("grad can be implicitly created only for scalars")

                def backward(tensors, grad_tensors=None, retain=False):
                    tensors = (tensors,) if isinstance(tensors, int) else tuple(tensors)
                    if grad_tensors is None:
                        grads = [None] * len(tensors)
                    else:
                        grads = list(grad_tensors)
                    _make_grads(tensors, grads)

                class Tensor:
                    def backward(self, gradient=None):
                        backward(self, gradient)
                """,
        },
    )
    found = graph.callers("ad/grad.py", "_make_grads")
    assert found is not None
    by_name = {caller.name: caller for caller in found.callers}
    direct = by_name["ad.grad.backward"]
    assert (direct.passes, direct.computes) == ((), ())
    assert direct.feeds == (("grads", ("grad_tensors", "tensors")), ("outputs", ("tensors",)))
    assert by_name["ad.grad.Tensor.backward"].feeds == (("grads", ("gradient",)),)


def test_callers_carry_what_their_docstrings_say(tmp_path: Path) -> None:
    """A caller brings its raises section and the entries for the parameters it passes on; the
    function asked about brings its own parameter entries, a constructor its class's too, and
    a class without a constructor of its own documents what calling it passes on."""
    graph = _graph(
        tmp_path,
        {
            "opt/__init__.py": "",
            "opt/check.py": '''\
                def _check_rate(rate):
                    """Check.

                    Args:
                        rate: the rate to check.
                    """
                    if rate < 0:
                        raise ValueError(rate)

                class Optimizer:
                    """An optimizer.

                    Args:
                        lr (float): learning rate.
                        name (str): what it is called.

                    Raises:
                        ValueError: if lr is negative.
                    """

                    def __init__(self, lr, name=""):
                        _check_rate(lr)

                class SGD(Optimizer):
                    """Plain descent.

                    Args:
                        lr: how far each step goes.
                    """
                ''',
        },
    )
    found = graph.callers("opt/check.py", "_check_rate")
    assert found is not None
    assert found.documents == (("rate", "the rate to check.", 5),)
    by_name = {caller.name: caller for caller in found.callers}
    init = by_name["opt.check.Optimizer.__init__"]
    assert init.documents == (("lr", "learning rate.", 14),)
    assert init.raises == (("ValueError", "if lr is negative.", 18),)
    assert by_name["opt.check.SGD"].documents == (("lr", "how far each step goes.", 28),)


def test_callers_on_the_same_instance_are_marked(tmp_path: Path) -> None:
    """`same_instance`: every call on the way is `self.m(...)` or `super().m(...)`; a call on
    some other value of the class is not."""
    graph = _graph(
        tmp_path,
        {
            "seq/__init__.py": "",
            "seq/core.py": """\
                class Seq:
                    def _item(self, idx):
                        if idx >= len(self):
                            raise IndexError(idx)

                    def get(self, idx):
                        return self._item(idx)

                    def first(self):
                        return self.get(0)

                def peek(seq: Seq, idx):
                    return seq._item(idx)
                """,
        },
    )
    found = graph.callers("seq/core.py", "Seq._item")
    assert found is not None
    same = {caller.name: caller.same_instance for caller in found.callers}
    assert same == {"seq.core.Seq.get": True, "seq.core.Seq.first": True, "seq.core.peek": False}


def test_a_constructor_taking_kwargs_carries_its_class_s_whole_parameters_section(
    tmp_path: Path,
) -> None:
    """`__init__(self, *args, **kwargs)` takes whatever its class's docstring names: every
    entry of its parameters section comes along; a constructor naming its parameters keeps
    only theirs."""
    graph = _graph(
        tmp_path,
        {
            "nn/__init__.py": "",
            "nn/rnn.py": """\
                class RNN:
                    \"\"\"A layer.

                    Args:
                        nonlinearity: 'tanh' or 'relu'.
                        hidden: The hidden size.
                    \"\"\"

                    def __init__(self, *args, **kwargs):
                        pass

                class Cell:
                    \"\"\"A cell.

                    Args:
                        bias: Whether to add a bias.
                        hidden: The hidden size.
                    \"\"\"

                    def __init__(self, hidden):
                        pass
                """,
        },
    )
    whole = graph.callers("nn/rnn.py", "RNN.__init__")
    named = graph.callers("nn/rnn.py", "Cell.__init__")
    assert whole is not None and named is not None
    assert [name for name, _text, _line in whole.documents] == ["nonlinearity", "hidden"]
    assert [name for name, _text, _line in named.documents] == ["hidden"]


def test_a_function_returning_a_nested_one_reaches_what_that_one_calls(tmp_path: Path) -> None:
    """`transform(func, scale)` returns `wrapped`, which calls `_apply(func, scale, args)`:
    its callers call what it returns, so `transform` reaches `_apply` (said `returned`), its
    `scale` reaching `_apply`'s as `wrapped` reads it, through a decorator's wrapping too; a
    name the nested function binds, or one the enclosing function rebinds, passes nothing,
    and a nested function merely defined, or handed to a built-in (`map`), reaches nothing."""
    graph = _graph(
        tmp_path,
        {
            "t/__init__.py": "",
            "t/api.py": """\
                import functools

                def _apply(func, scale, args):
                    if scale <= 0:
                        raise ValueError(scale)

                def transform(func, scale):
                    @functools.wraps(func)
                    def wrapped(*args):
                        return _apply(func, scale, args)
                    return wrapped

                def wrapping(func, scale):
                    def inner(*args):
                        return _apply(func, scale, args)
                    return functools.wraps(func)(inner)

                def shadowed(func, scale):
                    def inner(*args):
                        scale = 2
                        return _apply(func, scale, args)
                    return inner

                def rebinding(func, scale):
                    scale = abs(scale)
                    def inner(*args):
                        return _apply(func, scale, args)
                    return inner

                def kept(func, scale):
                    def inner(*args):
                        return _apply(func, scale, args)
                    return func

                def mapped(func, scale, xs):
                    def inner(x):
                        return _apply(func, scale, x)
                    return map(inner, xs)

                def checked(scale):
                    def check():
                        _apply(None, scale, ())
                    check()

                def both(scale):
                    def check():
                        _apply(None, scale, ())
                    check()
                    return check
                """,
        },
    )
    found = graph.callers("t/api.py", "_apply")
    assert found is not None
    callers = {caller.name: caller for caller in found.callers}
    assert sorted(callers) == [
        "t.api.both",
        "t.api.checked",
        "t.api.rebinding",
        "t.api.shadowed",
        "t.api.transform",
        "t.api.wrapping",
    ]
    for name in ("t.api.transform", "t.api.wrapping"):
        assert callers[name].returned and callers[name].depth == 2
        assert dict(callers[name].passes) == {"func": "func", "scale": "scale"}
    assert dict(callers["t.api.shadowed"].passes) == {"func": "func"}
    assert dict(callers["t.api.rebinding"].passes) == {"func": "func"}
    # Called, not returned: reached as before, and what `check` reads of it passes on.
    assert not callers["t.api.checked"].returned
    assert dict(callers["t.api.checked"].passes) == {"scale": "scale"}
    # Called and returned: it reaches the raise itself.
    assert not callers["t.api.both"].returned


def test_a_nested_functions_closure_names_pass_out_to_the_enclosing_ones_callers(
    tmp_path: Path,
) -> None:
    """A raise inside the returned function, testing what it reads of its enclosing one
    (`argnums`): the enclosing function's callers pass their own parameters on to that name."""
    graph = _graph(
        tmp_path,
        {
            "t/__init__.py": "",
            "t/api.py": """\
                def jac(func, argnums=0):
                    def wrapper(*args):
                        if argnums == ():
                            raise RuntimeError("argnums must be non-empty")
                        return func(*args)
                    return wrapper

                def hess(func, argnums=0):
                    return jac(jac(func, argnums), argnums)
                """,
        },
    )
    found = graph.callers("t/api.py", "jac.wrapper")
    assert found is not None
    callers = {caller.name: caller for caller in found.callers}
    assert dict(callers["t.api.jac"].passes) == {"argnums": "argnums", "func": "func"}
    assert callers["t.api.jac"].returned
    # Its own `func` goes to the outer `jac` made into another function: not passed as it is.
    assert dict(callers["t.api.hess"].passes) == {"argnums": "argnums"}
    assert callers["t.api.hess"].returned


def test_a_caller_calling_what_it_gets_back_at_once_reaches_the_raise_itself(
    tmp_path: Path,
) -> None:
    """`grad` calls `_vmap(f)(x)`: the function `_vmap` returns runs inside `grad`, so `grad`
    reaches the check itself (not through a function it returns), while `vmap`, which hands
    `_vmap`'s function on to its callers, does not."""
    graph = _graph(
        tmp_path,
        {
            "t/__init__.py": "",
            "t/api.py": """\
                def _check(dims):
                    if dims < 0:
                        raise ValueError(dims)

                def _vmap(func, dims):
                    def wrapped(*args):
                        _check(dims)
                        return func(*args)
                    return wrapped

                def vmap(func, dims=0):
                    return _vmap(func, dims)

                def grad(func, x, dims=0):
                    return _vmap(func, dims)(x)
                """,
        },
    )
    found = graph.callers("t/api.py", "_check")
    assert found is not None
    callers = {caller.name: caller for caller in found.callers}
    assert callers["t.api.vmap"].returned
    assert not callers["t.api.grad"].returned
    assert dict(callers["t.api.grad"].passes) == {"dims": "dims"}


def test_a_partial_is_a_call_where_it_is_made(tmp_path: Path) -> None:
    """`functools.partial(f, ...)` (imported either way) reaches `f` from the function that
    makes it, passing on what the partial binds; the argument left open is not passed."""
    graph = _graph(
        tmp_path,
        {
            "maps/__init__.py": "",
            "maps/dims.py": """\
                import functools
                from functools import partial

                def _tree_map(fn, tree):
                    return [fn(leaf) for leaf in tree]

                def _check_leaf(leaf, func, out_dims):
                    if isinstance(leaf, int):
                        return
                    raise ValueError(f"{func}: {out_dims} must hold ints")

                def _check_dims(out_dims, func):
                    _tree_map(partial(_check_leaf, func=func, out_dims=out_dims), out_dims)

                def vmap(func, out_dims=0):
                    _check_dims(out_dims, func)

                def check_one(leaf):
                    return functools.partial(_check_leaf, leaf, "f")

                def not_partial(leaf):
                    return print(_check_leaf, leaf)
                """,
        },
    )
    assert _callers(graph, "maps/dims.py", "_check_leaf") == [
        ("maps.dims.check_one", 1),
        ("maps.dims.vmap", 2),
    ]
    assert _passes(graph, "maps/dims.py", "_check_leaf") == {
        "maps.dims.check_one": {"leaf": "leaf"},
        "maps.dims.vmap": {"func": "func", "out_dims": "out_dims"},
    }
