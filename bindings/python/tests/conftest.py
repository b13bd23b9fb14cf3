import os

import pytest


def _path(var: str) -> str:
    path = os.environ.get(var, "")
    if not path or not os.path.isfile(path):
        pytest.skip(f"{var} is not set or missing (tests/run.sh makes it)")
    return path


@pytest.fixture(scope="session")
def micro() -> str:
    return _path("HARK_TEST_MICRO")


@pytest.fixture(scope="session")
def micro_en() -> str:
    return _path("HARK_TEST_MICRO_EN")


@pytest.fixture(scope="session")
def speech() -> str:
    return _path("HARK_TEST_SPEECH")


@pytest.fixture(scope="session")
def model(micro):
    import hark

    return hark.WhisperModel(micro, cpu_threads=1, num_workers=2)


@pytest.fixture(scope="session")
def vad_model() -> str:
    path = os.path.join(os.environ.get("HARK_SHARED_DIR", ""), "vad", "silero-v6.2.0-ggml.bin")
    if not os.path.isfile(path):
        pytest.skip(f"no Silero model at {path} (../shared/vad)")
    return path
