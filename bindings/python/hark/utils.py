"""Models by name (the official ggml files whisper.cpp publishes) and faster-whisper's helpers."""

import os
from typing import List, Optional

from hark import _hark


def available_models() -> List[str]:
    """The official model names hark can download ("tiny", "base.en", "large-v3-turbo-q5_0", ...)."""
    return list(_hark.available_models())


def download_model(size_or_id: str, output_dir: Optional[str] = None, local_files_only: bool = False,
                   cache_dir: Optional[str] = None, revision: Optional[str] = None,
                   use_auth_token: Optional[str] = None) -> str:
    """The path of an official model, downloaded with hark's checked download (digest verified,
    resumable) into output_dir (default: hark's models folder, $HARK_MODELS or ~/.cache/hark/models)
    unless it is there. local_files_only=True never downloads: a missing model is FileNotFoundError."""
    if revision is not None or use_auth_token is not None:
        raise NotImplementedError("revision and use_auth_token are Hugging Face Hub options; hark downloads ggml files")
    directory = output_dir or cache_dir or ""
    if local_files_only:
        return _hark.find_model(os.path.join(directory, f"ggml-{size_or_id}.bin") if directory else size_or_id)
    return _hark.download_model(size_or_id, directory)


def format_timestamp(seconds: float, always_include_hours: bool = False, decimal_marker: str = ".") -> str:
    """hh:mm:ss.mmm (the hours only when there are any, or when asked)."""
    if seconds < 0:
        raise ValueError("format_timestamp: a non-negative number of seconds is needed")
    ms = round(seconds * 1000.0)
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    secs, ms = divmod(ms, 1000)
    head = f"{hours:02d}:" if always_include_hours or hours > 0 else ""
    return f"{head}{minutes:02d}:{secs:02d}{decimal_marker}{ms:03d}"
