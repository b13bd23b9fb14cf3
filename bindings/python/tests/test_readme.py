"""The README's Python example, run as it is printed: saved as a script in a folder that has what it
names (talk.mp3, and base.en in the models folder, as a download would have left it)."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def first_block(text: str, heading: str, lang: str) -> str:
    section = text.split(f"\n{heading}\n", 1)
    assert len(section) == 2, f"the README has no '{heading}'"
    m = re.search(rf"^```{lang}\n(.*?)^```$", section[1], re.S | re.M)
    assert m, f"the README has no {lang} block under '{heading}'"
    return m.group(1)


def test_the_readme_example_runs_as_printed(tmp_path, micro_en):
    mp3 = os.environ.get("HARK_TEST_MP3", "")
    if not os.path.isfile(mp3):
        pytest.skip("no talk.mp3 (tests/run.sh makes it with make-test-audio)")
    code = first_block(README.read_text(encoding="utf-8"), "### From Python", "python")
    assert 'WhisperModel("base.en"' in code and '"talk.mp3"' in code
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(micro_en, models / "ggml-base.en.bin")  # what `hark download base.en` leaves there
    shutil.copy(mp3, tmp_path / "talk.mp3")
    (tmp_path / "example.py").write_text(code, encoding="utf-8")
    env = dict(os.environ, HARK_MODELS=str(models))
    r = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines, "no segments printed"
    for line in lines:
        assert re.match(r"^\[\d+\.\d\d -> \d+\.\d\d\] ", line), line
