"""The example notebook (docs/notebook.ipynb) executed as a user runs it: every cell
runs, each result displays as HTML with its answer first, each ``.plot()`` as an image."""

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


def test_the_example_notebook_runs_and_displays_every_result():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parents[1])}},
    )
    client.execute()  # a cell that raises fails here, with its traceback
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(html) == 4 and len(images) == 4
    assert html[0].count("re-identified") >= 1 and "Families (learned distances)" in html[0]
    assert "Membership advantage (TPR - FPR)" in html[2] and "out of sample" in html[2]
    assert "Cells" in html[3]
    assert not [o for o in outputs if o.get("output_type") == "error"]
