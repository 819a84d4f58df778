"""Other people's notebooks run (issue #50): public evcxr notebooks whose first cells add
crates with `:dep` (plotters with its `evcxr` feature, ndarray 0.17 with ndarray-rand 0.16,
statrs, rand, serde), from a fresh kernel, cell by cell, against their saved outputs."""

import pytest

import public_notebooks


@pytest.mark.parametrize("name", list(public_notebooks.NOTEBOOKS))
def test_a_public_notebook_runs_as_its_author_saved_it(jupyter_path, name):
    report = public_notebooks.run_notebook(name, log=lambda *_: None)
    problems = [f"code#{c['cell']}: {c['problem']}" for c in report if c["problem"]]
    assert report and not problems, "\n".join(problems)
