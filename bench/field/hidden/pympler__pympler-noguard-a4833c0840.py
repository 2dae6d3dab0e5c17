"""Hidden check: ReferenceGraph.render returns False without invoking the renderer when there are no objects to draw"""

import pympler.refgraph
from pympler.refgraph import ReferenceGraph


class _RecordingPopen(object):
    """Stands in for subprocess.Popen: records the command lines, always succeeds."""

    calls = []

    def __init__(self, args, **kwargs):
        self.calls.append(tuple(args))
        self.returncode = None
        self.stdout = None

    def communicate(self, data=None):
        self.returncode = 0
        return (b"", b"")


def _record_renderer_calls(monkeypatch):
    calls = []
    recorder = type("Recorder", (_RecordingPopen,), {"calls": calls})
    monkeypatch.setattr(pympler.refgraph, "Popen", recorder)
    return calls


def test_empty_graph_does_not_need_the_renderer(tmp_path):
    graph = ReferenceGraph([])
    assert graph.count == 0
    out = tmp_path / "empty.svg"
    missing = str(tmp_path / "no-such-graphviz-binary")
    assert graph.render(str(out), cmd=missing, format="svg") is False
    assert graph.render(str(out), cmd=missing, format="png", unflatten=True) is False
    assert not out.exists()


def test_graph_reduced_to_no_cycles_is_not_rendered(tmp_path, monkeypatch):
    calls = _record_renderer_calls(monkeypatch)
    leaf = {"name": "leaf"}
    holder = [leaf, 7]
    graph = ReferenceGraph([holder, leaf, "text"], reduce=True)
    assert graph.num_in_cycles == 0
    assert graph.render(str(tmp_path / "acyclic.ps"), cmd="neato") is False
    assert graph.render(str(tmp_path / "acyclic.ps"), unflatten=True) is False
    assert calls == []


def test_non_empty_graph_is_handed_to_the_renderer(tmp_path, monkeypatch):
    calls = _record_renderer_calls(monkeypatch)
    ring = []
    ring.append(ring)
    graph = ReferenceGraph([ring], reduce=True)
    assert graph.num_in_cycles == 1
    target = str(tmp_path / "ring.pdf")
    assert graph.render(target, cmd="neato", format="pdf") is True
    assert len(calls) == 1
    assert calls[0][:4] == ("neato", "-Tpdf", "-o", target)
