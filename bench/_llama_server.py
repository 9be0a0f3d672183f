"""llama-cpp-python's own OpenAI-compatible server with the bundled SmolLM2 GGUF, started
for a benchmark run (`python -m llama_cpp.server`, the build `make install` made)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

START_WAIT = 180.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """The server process; `url` is the OpenAI base URL (`.../v1`)."""

    def __init__(self, model: Path, log: Path, *, threads: int = 1, context: int = 4096) -> None:
        """One thread by default: on shared cores llama.cpp's threads spin waiting for each
        other (measured here under load: 10 tokens/s with one thread, 1.7 with two)."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        self._out = log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_threads",
                str(threads),
                "--n_threads_batch",
                str(threads),
                "--n_ctx",
                str(context),
            ],
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_WAIT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return
            time.sleep(0.5)
        raise RuntimeError(f"llama_cpp.server did not start: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._out.close()
