"""The LM Studio-compatible test host: speed, prefix cache, slots, faults, model APIs."""

import json
import subprocess
import sys
import time

import httpx
import pytest

from harness.testing.lmstudio import Faults, TestHost
from harness.util.serving import bind_socket

pytestmark = pytest.mark.integration


def chat(url, content, max_tokens=10, stream=False, **kw):
    return httpx.post(
        url + "/v1/chat/completions",
        timeout=10,
        json={
            "model": "test-model",
            "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens,
            "stream": stream,
            **kw,
        },
    )


def test_sleeps_prefill_and_decode_and_caches_prefixes():
    with TestHost(prefill=2000, decode=200) as h:
        t0 = time.monotonic()
        r = chat(h.url, "x" * 4000)  # ~1000 tokens: 0.5 s prefill + 9/200 decode
        first = time.monotonic() - t0
        usage = r.json()["usage"]
        assert usage["prompt_tokens"] == 1003 and usage["completion_tokens"] == 10
        assert usage["prompt_tokens_details"]["cached_tokens"] == 0
        assert first >= 0.54  # it slept its prefill and decode (a floor: load only adds)
        assert r.json()["timings"]["prompt_ms"] == pytest.approx(1003 / 2000 * 1000, abs=1)
        r = chat(h.url, "x" * 4000 + " and more")
        assert r.json()["usage"]["prompt_tokens_details"]["cached_tokens"] >= 1000
        # the cached prefix cost no prefill time: the host's own figure (what it slept),
        # not a wall-clock comparison that a loaded machine can turn around
        assert r.json()["timings"]["prompt_ms"] < 10
        assert h.stats["cached_tokens"] >= 1000


def test_stream_has_usage_only_when_asked():
    with TestHost(decode=1000) as h:
        body = chat(h.url, "hi", stream=True, stream_options={"include_usage": True}).text
        events = [e[6:] for e in body.split("\n\n") if e.startswith("data: ")]
        assert events[-1] == "[DONE]"
        assert json.loads(events[-2])["usage"]["completion_tokens"] == 10
        plain = chat(h.url, "hi", stream=True).text
        assert '"usage"' not in plain


def test_parallel_slots_queue_the_rest():
    with TestHost(prefill=1e6, decode=20, parallel=2) as h:
        import concurrent.futures as cf

        t0 = time.monotonic()
        with cf.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: chat(h.url, f"q{i}", max_tokens=5), range(4)))
        took = time.monotonic() - t0
        assert h.stats["max_concurrent"] == 2
        assert 0.38 <= took < 2.0  # two rounds of 4/20 s; loose upper bound for busy CI


def test_faults_switch_at_run_time():
    with TestHost(faults=Faults(error_rate=1.0)) as h:
        assert chat(h.url, "x").status_code == 500
        r = httpx.post(
            h.url + "/_fault", json={"error_rate": 0, "rate_limit_rate": 1, "retry_after": 3}
        )
        assert r.json()["rate_limit_rate"] == 1
        r = chat(h.url, "x")
        assert r.status_code == 429 and r.headers["retry-after"] == "3"
        h.set_faults(rate_limit_rate=0, slow_s=0.3)
        t0 = time.monotonic()
        assert chat(h.url, "x").status_code == 200
        assert time.monotonic() - t0 >= 0.3
        assert httpx.post(h.url + "/_fault", json={"bogus": 1}).status_code == 400


def test_refuse_for_a_while():
    with TestHost() as h:
        httpx.post(h.url + "/_fault", json={"refuse_s": 2.0})
        began = time.monotonic()

        def status() -> int | None:
            try:
                return httpx.get(h.url + "/v1/models").status_code
            except httpx.ConnectError:
                return None

        seen = [status()]  # it stops listening within moments, then listens again
        while (None not in seen or seen[-1] is None) and time.monotonic() - began < 20:
            time.sleep(0.1)
            seen.append(status())
        assert None in seen, "connections were never refused"
        assert seen[-1] == 200, "it did not listen again"


def test_model_info_apis():
    with TestHost(
        models=["a/b"], quant="Q8_0", format="mlx", arch="llama", context_length=4096, parallel=3
    ) as h:
        v1 = httpx.get(h.url + "/api/v1/models").json()["models"][0]
        assert v1["key"] == "a/b" and v1["quantization"]["name"] == "Q8_0"
        assert v1["format"] == "mlx" and v1["architecture"] == "llama"
        assert v1["loaded_instances"][0]["config"] == {"context_length": 4096, "parallel": 3}
        v0 = httpx.get(h.url + "/api/v0/models").json()["data"][0]
        assert (v0["quantization"], v0["compatibility_type"], v0["arch"]) == (
            "Q8_0",
            "mlx",
            "llama",
        )
        assert httpx.get(h.url + "/api/v0/models/a/b").json()["id"] == "a/b"
        assert httpx.get(h.url + "/v1/models").json()["data"][0]["id"] == "a/b"
        assert chat(h.url, "x").status_code == 404  # test-model is not loaded here


def test_runs_as_a_module():
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.testing.lmstudio",
            "--port",
            str(port),
            "--prefill",
            "350",
            "--decode",
            "40",
            "--quant",
            "Q4_K_M",
            "--model",
            "m1",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening" in proc.stdout.readline()
        info = httpx.get(f"http://127.0.0.1:{port}/api/v0/models").json()["data"][0]
        assert info["id"] == "m1" and info["quantization"] == "Q4_K_M"
    finally:
        proc.terminate()
        proc.wait(10)
