"""A real OpenAI-compatible engine for tests and benchmarks: llama.cpp's server.

``write_tiny_model`` writes a llama-architecture GGUF with random weights (``gguf``
package; a few hundred KB: 2 layers, 64 wide, a byte-level SentencePiece vocabulary), so
the text it generates is noise while its tokenizer, sampling, streaming, slots and usage
accounting are llama.cpp's own. ``llama_server`` starts ``python -m llama_cpp.server``
(``llama-cpp-python[server]``) on a free loopback port and yields its base URL.

Both need the optional packages: ``engine_available()`` says whether they are installed
(the wheel of llama-cpp-python is compiled from source on this platform; see
docs/TESTING.md for the cached wheel).
"""

from __future__ import annotations

import contextlib
import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ALIAS = "tiny/llama"
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def engine_available() -> bool:
    return all(importlib.util.find_spec(m) for m in ("gguf", "numpy", "llama_cpp", "uvicorn"))


def _vocabulary() -> tuple[list[str], list[float], list[int]]:
    """``<unk>``, ``<s>``, ``</s>``, the 256 byte tokens and some word pieces."""
    import gguf

    kinds = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>"]
    types = [kinds.UNKNOWN, kinds.CONTROL, kinds.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [kinds.BYTE] * 256
    pieces = ["\u2581", *"abcdefghijklmnopqrstuvwxyz", *(f"\u2581{c}" for c in "aeiost")]
    pieces += ["\u2581the", "\u2581and", "ing", "ed", "er", "\u2581ok"]
    tokens += pieces
    types += [kinds.NORMAL] * len(pieces)
    scores = [0.0] * 3 + [-1000.0] * 256 + [-float(i) for i in range(len(pieces))]
    return tokens, scores, [int(t) for t in types]


def write_tiny_model(path: Path, *, seed: int = 7, context: int = 2048) -> Path:
    """A random-weight llama GGUF at ``path`` (F32; the same bytes for the same seed)."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    tokens, scores, types = _vocabulary()
    vocab, embd, ff, layers, heads = len(tokens), 64, 128, 2, 4
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("harness tiny llama (random weights)")
    w.add_context_length(context)
    w.add_embedding_length(embd)
    w.add_block_count(layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_rope_dimension_count(embd // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_chat_template(CHATML)

    def tensor(name: str, *shape: int) -> None:
        scale = 1.0 if len(shape) == 1 else 0.02
        data = np.ones(shape, np.float32) if len(shape) == 1 else rng.normal(0, scale, shape)
        w.add_tensor(name, data.astype(np.float32))

    tensor("token_embd.weight", vocab, embd)
    tensor("output_norm.weight", embd)
    tensor("output.weight", vocab, embd)
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", embd)
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensor(f"blk.{i}.{part}.weight", embd, embd)
        tensor(f"blk.{i}.ffn_norm.weight", embd)
        tensor(f"blk.{i}.ffn_gate.weight", ff, embd)
        tensor(f"blk.{i}.ffn_up.weight", ff, embd)
        tensor(f"blk.{i}.ffn_down.weight", embd, ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(model: Path, *, timeout: float = 90.0) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on ``model``, on loopback; yields its URL.
    It holds one model instance and answers one request at a time (one slot)."""
    port = _free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model),
        "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "1024", "--n_threads", "1", "--verbose", "False",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace")[-2000:] if proc.stderr else ""
                raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: {err}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/v1/models", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer on {url}")
            time.sleep(0.1)
        yield url
    finally:
        stop(proc)
        if proc.stderr:
            proc.stderr.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL after 10 s; waited for either way."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
