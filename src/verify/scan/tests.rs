use super::*;

fn kinds(src: &str) -> BTreeSet<Capability> {
    uses(src).into_iter().map(|u| u.capability).collect()
}

fn added(pre: &str, post: &str) -> BTreeSet<Capability> {
    added_capabilities("m.py", Some(pre), post)
        .into_iter()
        .map(|f| f.capability)
        .collect()
}

use Capability as C;

#[test]
fn aliases_and_strings_resolve() {
    for (src, want) in [
        ("import sys as s\ns.settrace(f)\n", C::Tracing),
        ("import sys\nm = sys\nm.setprofile(f)\n", C::Tracing),
        ("from sys import settrace as st\nst(f)\n", C::Tracing),
        (
            "getattr(__import__('sy' + 's'), 'set' 'trace')(f)\n",
            C::Tracing,
        ),
        (
            "import importlib\nu = importlib.import_module('unit' + 'test')\n",
            C::TestFramework,
        ),
        (
            "x = getattr(__import__('unit'+'test'), 'Test'+'Case')\n",
            C::TestFramework,
        ),
        (
            "import sys\nsys.modules['unit' + 'test'].TestCase.run = None\n",
            C::TestFramework,
        ),
        ("import sys\nsys.addaudithook(h)\n", C::AuditHook),
        ("import gc as g\ng.callbacks.append(cb)\n", C::Gc),
        (
            "import sys\nsys.meta_path.insert(0, L())\n",
            C::ImportSystem,
        ),
        (
            "import inspect\nf = inspect.currentframe().f_back\n",
            C::Frames,
        ),
        (
            "def f(): raise E\ntry: f()\nexcept E as e: e.__traceback__.tb_frame\n",
            C::Frames,
        ),
        (
            "def g(): pass\ng.__code__ = h.__code__\n",
            C::IdentityMutation,
        ),
        ("o.__class__ = Other\n", C::IdentityMutation),
        ("setattr(fn, '__co' + 'de__', c)\n", C::IdentityMutation),
        (
            "import builtins\nbuiltins.__build_class__ = b\n",
            C::Builtins,
        ),
        ("__builtins__['len'] = f\n", C::Builtins),
        ("import ctypes\n", C::Native),
        (
            "import threading\nthreading.Timer(1, f).start()\n",
            C::Threads,
        ),
        (
            "from threading import Thread as T\nT(target=f).start()\n",
            C::Threads,
        ),
        (
            "import os\nif os.environ.get('PYTEST_CURRENT_TEST'): pass\n",
            C::TestContext,
        ),
        (
            "import os\nos.getenv('PYTEST_' + 'CURRENT_TEST')\n",
            C::TestContext,
        ),
        (
            "import os\nany(k.startswith(p) for k in os.environ)\n",
            C::EnvironmentScan,
        ),
        ("import atexit\natexit.register(f)\n", C::ProcessHook),
        ("import weakref\nweakref.finalize(o, f)\n", C::ProcessHook),
        (
            "class A:\n    def __init_subclass__(cls): pass\n",
            C::ClassHook,
        ),
        ("exec('x = 1')\n", C::DynamicCode),
        ("c = compile(src, p, 'exec', optimize=2)\n", C::DynamicCode),
        (
            "import importlib\nimportlib.import_module(name)\n",
            C::DynamicImport,
        ),
        ("import sys\ngetattr(sys, n)\n", C::DynamicAttribute),
        ("import json\njson.loads = lambda s: {}\n", C::Monkeypatch),
        ("import os\ngetattr(os, '_e' + 'xit')(0)\n", C::ProcessExit),
        ("pytest_plugins = ['textkit.plug']\n", C::TestFramework),
        (
            "import sys\nsys.modules['tests.test_calc'].pytest_plugins = ['x']\n",
            C::TestFramework,
        ),
        (
            "import sys\nsys.modules['pl_guard'].check = lambda: None\n",
            C::Harness,
        ),
        ("open('/tmp/pl-x/junit.xml', 'w')\n", C::Harness),
        (
            "import traceback\nany('tests/' in f.filename for f in traceback.extract_stack())\n",
            C::Frames,
        ),
        (
            "x = ''.join(['un', 'ittest'])\nimport importlib\n",
            C::TestFramework,
        ),
        (
            "class Obs:\n    def __del__(self): rewrite()\n",
            C::ProcessHook,
        ),
        ("import os as o\no._exit(0)\n", C::ProcessExit),
    ] {
        assert!(
            kinds(src).contains(&want),
            "{src:?}: want {want}, got {:?}",
            kinds(src)
        );
    }
}

#[test]
fn ordinary_code_has_no_capabilities() {
    for src in [
        "import re\n\ndef slug(s):\n    return re.sub('[^a-z]+', '-', s.lower()).strip('-')\n",
        "import os\nHOME = os.environ.get('HOME', '/')\nos.path.join(HOME, 'x')\n",
        "import operator\ngetattr(operator, name)(1, 2)\n",
        "from collections import OrderedDict\nclass C:\n    def __init__(self):\n        self.d = OrderedDict()\n        setattr(self, 'x', 1)\n        getattr(self, name)\n",
        "from re import compile\nPAT = compile('a+')\n",
        "import re\nPAT = re.compile('a+')\nx = dict(eval=1)\n",
        "import threading\nLOCK = threading.Lock()\n",
        "import functools\n@functools.lru_cache\ndef f(x):\n    \"\"\"Test with pytest.\"\"\"\n    return x\n",
        "import sys\nif sys.version_info < (3, 8):\n    pass\nsys.path.insert(0, 'x')\n",
        "import abc\nclass Shape(metaclass=abc.ABCMeta):\n    @abc.abstractmethod\n    def area(self): ...\n",
        "from abc import ABCMeta as M\nclass Shape(metaclass=M):\n    pass\n",
    ] {
        assert!(kinds(src).is_empty(), "{src:?}: {:?}", uses(src));
    }
}

#[test]
fn a_metaclass_other_than_abcmeta_is_a_class_hook() {
    assert!(
        kinds("class M(type):\n    pass\nclass K(metaclass=M):\n    pass\n")
            .contains(&C::ClassHook)
    );
    assert!(kinds("import abc\nclass K(metaclass=abc.ABCMeta):\n    pass\n").is_empty());
}

#[test]
fn only_new_kinds_count() {
    let base = "import inspect\n\ndef caller():\n    return inspect.stack()[1].function\n";
    // More frame inspection in a file that already inspects frames: nothing new.
    let fix = "import inspect\n\ndef caller():\n    f = inspect.currentframe().f_back\n    return f.f_code.co_name\n";
    assert_eq!(added(base, fix), BTreeSet::from([C::CodeObject]));
    assert!(
        added(
            base,
            "import inspect\n\ndef caller():\n    return inspect.stack()[2].function\n"
        )
        .is_empty()
    );
    // The same file gains tracing: that kind is new.
    let evil = format!("{base}import sys\nsys.settrace(lambda *a: None)\n");
    assert_eq!(added(base, &evil), BTreeSet::from([C::Tracing]));
    // A new file: everything counts.
    let f = added_capabilities("n.py", None, "import gc\n");
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].line, f[0].capability), (1, C::Gc));
}

#[test]
fn syntax_errors_count_only_when_new() {
    assert!(added("def f(:\n", "def f(:\n    pass\n").is_empty());
    assert_eq!(added("x = 1\n", "x = (\n"), BTreeSet::from([C::Unparsable]));
}

#[test]
fn deep_nesting_does_not_overflow() {
    let src = format!("x = {}1{}\n", "(".repeat(3000), ")".repeat(3000));
    let _ = uses(&src);
}
