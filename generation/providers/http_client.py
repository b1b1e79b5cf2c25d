"""The one HTTP client for LLM servers: generation, scoring and the perplexity detector.

Built on ``httpx`` (``pip install 'judge-transfer-audit[http]'``), imported lazily. We chose httpx
over the official ``openai`` SDK because the SDK hides the bytes on the wire: it reads an
answer whole (no size cap), has no overall deadline, follows redirects by its own rules and
does not speak the legacy ``/completions`` endpoint with ``echo`` + ``logprobs`` the
perplexity detector needs. httpx gives timeouts, proxies (``HTTP(S)_PROXY``/``NO_PROXY``),
TLS and streaming; this module adds what an LLM client needs on top of it:

* **retries** on HTTP 408/409/429/5xx, timeouts, dropped connections and unreadable bodies,
  with exponential backoff and full jitter (``backoff_base_s * 2**k`` capped at
  ``max_backoff_s``), never shorter than the server's ``Retry-After``;
* an **overall deadline** per request (``deadline_s``, from sending the request to the last
  byte of the answer), enforced by closing the connection when it passes, so a server that
  trickles one byte at a time cannot keep a request alive past it;
* a **transfer limit** (``transfer_s``, from the first byte of the answer to its last, headers
  included): a server answers once it has generated, so an answer still arriving a minute
  after its first byte is a trickle, cut there rather than at the deadline;
* a **maximum answer size** (``max_response_mb``): ``Content-Length`` is checked before
  reading and the body is counted while it streams (decompressed bytes), never read whole;
* **redirects are never followed to another origin** (scheme, host, port): the request is
  not re-sent, so the key cannot leave the server it was meant for. A same-origin 307/308
  is followed (method and body kept); any other redirect is refused with a message naming
  where it pointed;
* the secret headers are redacted from every message (even when a server echoes them);
* lone UTF-16 surrogates in the JSON answer (``"\\ud800"``, which no file can store) are
  replaced by U+FFFD and counted.

Each request opens its own connection (no keep-alive), so the deadline can close exactly
that connection; an LLM request takes seconds, a connection milliseconds.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import re
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Mapping

from judge_transfer_audit.core.errors import InputError, InputProblem, ProviderError
from judge_transfer_audit.core.optional import import_optional

log = logging.getLogger("judge_transfer_audit.generation.providers.openai")

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_REDIRECTS = 5
_MIB = 1024 * 1024

#: Accepted range of every numeric limit (inclusive bounds; ``low_open`` excludes the lower).
LIMIT_RANGES: dict[str, tuple[float, float, bool]] = {
    "timeout_s": (0.0, 3600.0, True),
    "deadline_s": (0.0, 86400.0, True),
    "transfer_s": (0.0, 86400.0, True),
    "max_response_mb": (0.0, 4096.0, True),
    "backoff_base_s": (0.0, 600.0, False),
    "max_backoff_s": (0.0, 3600.0, False),
}
INT_RANGES: dict[str, tuple[int, int]] = {"max_retries": (0, 100), "max_concurrency": (1, 1024)}


@dataclass(frozen=True)
class HttpLimits:
    """How long and how much one LLM request may take.

    Attributes
    ----------
    timeout_s : float
        Longest wait for any single network step (connecting, or the next bytes of the answer).
    deadline_s : float
        Longest wall time of one request, from sending it to the last byte of the answer.
    transfer_s : float
        Longest time from the answer's first byte (status line) to its last: a server sends its
        answer once generated, so a slower one is trickling (a server that sends keep-alive
        bytes while it generates needs ``transfer_s`` as long as ``deadline_s``).
    max_response_mb : float
        Largest answer accepted, in MiB (decompressed).
    max_retries : int
        Retries after the first request.
    backoff_base_s, max_backoff_s : float
        Retry k (0-based) waits uniform(0, min(max_backoff_s, backoff_base_s * 2**k)), raised
        to the server's ``Retry-After`` (itself capped at ``max_backoff_s``).
    """

    timeout_s: float = 120.0
    deadline_s: float = 600.0
    transfer_s: float = 60.0
    max_response_mb: float = 32.0
    max_retries: int = 5
    backoff_base_s: float = 1.0
    max_backoff_s: float = 60.0

    @property
    def max_response_bytes(self) -> int:
        return int(self.max_response_mb * _MIB)


def check_limits(values: Mapping[str, Any], where: str = "provider") -> list[InputProblem]:
    """One problem per limit that is not a finite number in its range (see :data:`LIMIT_RANGES`)."""
    problems = []
    for key, (low, high, low_open) in LIMIT_RANGES.items():
        if key not in values:
            continue
        value = values[key]
        bracket = "(" if low_open else "["
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        ok = ok and (value > low if low_open else value >= low) and value <= high
        if not ok:
            problems.append(
                InputProblem(
                    where,
                    f"{key} must be a number in {bracket}{low:g}, {high:g}]",
                    column=key,
                    value=repr(value),
                    fix=f"set {key} to a number of {'MiB' if key.endswith('mb') else 'seconds'} in that range",
                )
            )
    for key, (low, high) in INT_RANGES.items():
        if key not in values:
            continue
        value = values[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            problems.append(
                InputProblem(
                    where,
                    f"{key} must be an integer in [{low}, {high}]",
                    column=key,
                    value=repr(value),
                    fix=f"set {key} to a whole number from {low} to {high}",
                )
            )
    return problems


def public_url(url: str) -> str:
    """``url`` without credentials: ``user:password@`` and the query string (where some
    gateways put a key) are masked, so journals, logs and messages never carry them."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "***" if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def join_url(base_url: str, path: str) -> str:
    """``base_url`` with ``path`` appended to its path, before any query string.

    ``join_url("http://h:8000/v1?key=x", "/completions")`` is
    ``"http://h:8000/v1/completions?key=x"``.
    """
    parts = urllib.parse.urlsplit(base_url)
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def is_loopback(url: str) -> bool:
    return origin(url)[1] in ("localhost", "127.0.0.1", "::1")


_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> tuple[Any, int]:
    """Replace lone UTF-16 surrogates in every string of a parsed JSON value by U+FFFD.

    ``json.loads`` turns ``"\\ud800"`` into a Python string that cannot be written as UTF-8;
    a valid pair (``"\\ud83d\\ude00"``) is already one character and is left alone.
    Returns the cleaned value and how many characters were replaced.
    """
    if isinstance(value, str):
        cleaned, n = _SURROGATE.subn("\ufffd", value)
        return cleaned, n
    if isinstance(value, list):
        total = 0
        out = []
        for item in value:
            item, n = replace_lone_surrogates(item)
            out.append(item)
            total += n
        return out, total
    if isinstance(value, dict):
        total = 0
        cleaned_dict = {}
        for key, item in value.items():
            key, n_key = replace_lone_surrogates(key)
            item, n = replace_lone_surrogates(item)
            cleaned_dict[key] = item
            total += n + n_key
        return cleaned_dict, total
    return value, 0


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        seconds = None
    if seconds is not None:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_SSL_LOCK = threading.Lock()
_SSL_CONTEXT: list[Any] = []


def _ssl_context(httpx: Any) -> Any:
    """One TLS context for every client (loading the CA bundle takes ~0.1 s); it honours
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` like httpx's own default."""
    with _SSL_LOCK:
        if not _SSL_CONTEXT:
            _SSL_CONTEXT.append(httpx.create_ssl_context(trust_env=True))
        return _SSL_CONTEXT[0]


@dataclass(frozen=True)
class _Exchange:
    status: int
    reason: str
    body: bytes
    retry_after: str | None = None
    location: str | None = None  #: a same-origin 307/308 target to follow


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class JsonAnswer:
    """A parsed JSON answer: the payload, how many requests it took, the wall time, and how
    many lone surrogates were replaced."""

    payload: dict[str, Any]
    n_attempts: int
    elapsed_s: float
    n_replaced_characters: int = 0


class LLMHttpClient:
    """POST JSON to an LLM server with retries, a deadline, a size cap and a redirect policy.

    Parameters
    ----------
    base_url : str
        Server root with its version prefix (a query string is kept after every path).
    limits : HttpLimits
    secret_headers : mapping, optional
        Headers that carry a key (``Authorization``...): sent only to ``base_url``'s origin
        and redacted (their values) from every message.
    headers : mapping, optional
        Other headers.
    describe : str
        How messages name the endpoint's owner, e.g. ``"(model m)"``.
    seed : int | None
        Seeds the jitter (a reproducible retry schedule).
    """

    def __init__(
        self,
        base_url: str,
        limits: HttpLimits,
        *,
        secret_headers: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        describe: str = "",
        seed: int | None = None,
    ):
        self._httpx = import_optional("httpx", "talking to an OpenAI-compatible server")
        self.base_url = base_url
        self.limits = limits
        self._secret_headers = dict(secret_headers or {})
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **dict(headers or {})}
        self._describe = describe
        self._secrets = [v for v in self._secret_headers.values() if v]
        for value in list(self._secrets):
            # "Bearer KEY": redact the key alone too
            self._secrets.extend(part for part in value.split() if len(part) >= 6)
        self._jitter = random.Random(seed)
        self._jitter_lock = threading.Lock()
        self._origin = origin(base_url)
        # A local server (vLLM, Ollama...) is never reached through an HTTP(S)_PROXY.
        self._client = self._httpx.Client(
            verify=_ssl_context(self._httpx),
            follow_redirects=False,
            trust_env=not is_loopback(base_url),
            limits=self._httpx.Limits(max_keepalive_connections=0),
        )

    # -- public -----------------------------------------------------------------------
    def where(self, path: str) -> str:
        return f"{public_url(join_url(self.base_url, path))}{' ' + self._describe if self._describe else ''}"

    def redact(self, text: str) -> str:
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, "[REDACTED]")
        return text

    def close(self) -> None:
        self._client.close()

    def post_json(self, path: str, body: dict[str, Any]) -> JsonAnswer:
        """POST ``body`` to ``base_url + path`` with retries; return the parsed JSON object.

        Raises
        ------
        ProviderError
            After the retries, or at once for a non-retryable failure (HTTP 4xx other than
            408/409/429, an answer over ``max_response_mb``, a refused redirect, an error
            object instead of an answer). The message names the endpoint and the limit hit.
        """
        start = time.monotonic()
        try:
            data = json.dumps(body, allow_nan=False).encode("utf-8")
        except ValueError:
            raise InputError(
                InputProblem(
                    self.where(path),
                    "a request field is NaN or infinite, which JSON cannot carry",
                    fix="give finite numbers in sampling and extra_body",
                )
            ) from None
        last = ""
        for k in range(self.limits.max_retries + 1):
            try:
                payload, n_replaced = self._request_once(path, data)
                return JsonAnswer(payload, k + 1, time.monotonic() - start, n_replaced)
            except _Retryable as exc:
                last = str(exc)
                if k == self.limits.max_retries:
                    break
                delay = self._backoff(k, exc.retry_after)
                log.warning(
                    "%s: %s; retry %d/%d in %.2fs", self.where(path), last, k + 1, self.limits.max_retries, delay
                )
                time.sleep(delay)
        raise ProviderError(
            f"{self.where(path)}: gave up after {self.limits.max_retries + 1} request(s); last error: {last}. "
            "Check that the server is up, or raise timeout_s / deadline_s / max_retries."
        )

    # -- internals ----------------------------------------------------------------------
    def _backoff(self, k: int, retry_after: float | None) -> float:
        cap = min(self.limits.max_backoff_s, self.limits.backoff_base_s * (2**k))
        with self._jitter_lock:
            delay = self._jitter.uniform(0.0, cap)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.limits.max_backoff_s))
        return delay

    def _request_once(self, path: str, data: bytes) -> tuple[dict[str, Any], int]:
        url = join_url(self.base_url, path)
        for _ in range(MAX_REDIRECTS + 1):
            answer = self._exchange(url, path, data)
            if answer.location is None:
                break
            url = answer.location
        else:
            raise ProviderError(
                f"{self.where(path)}: more than {MAX_REDIRECTS} redirects; set base_url to the final address"
            )
        status, raw = answer.status, answer.body
        if status >= 400:
            body = self.redact(raw[:300].decode("utf-8", "replace")).strip()
            detail = f"{answer.reason}: {body}" if body else answer.reason
            if status in RETRYABLE_STATUS:
                raise _Retryable(f"HTTP {status} {detail}".strip(), retry_after_seconds(answer.retry_after))
            raise ProviderError(f"{self.where(path)}: HTTP {status} {detail}".rstrip())
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            first = self.redact(raw[:80].decode("utf-8", "replace"))
            raise _Retryable(f"the server's answer is not JSON (first bytes: {first!r})") from None
        if not isinstance(payload, dict):
            raise _Retryable("the server's answer is not a JSON object")
        payload, n_replaced = replace_lone_surrogates(payload)
        if "error" in payload and "choices" not in payload:
            raise ProviderError(f"{self.where(path)}: server error: {self.redact(str(payload['error'])[:300])}")
        return payload, n_replaced

    def _exchange(self, url: str, path: str, data: bytes) -> "_Exchange":
        """One HTTP exchange under the deadline and the size cap (a redirect is not followed:
        its same-origin target is returned)."""
        httpx = self._httpx
        limits = self.limits
        expired = threading.Event()
        sockets: list[socket.socket] = []
        lock = threading.Lock()
        why: list[str] = []  # the limit that closed the connection
        deadline_msg = f"no complete answer within deadline_s={limits.deadline_s:g}s (the server was still sending)"
        transfer_msg = (
            f"the answer was still arriving transfer_s={limits.transfer_s:g}s after its first byte (the server "
            "trickles it); raise transfer_s if this server sends keep-alive bytes while it generates"
        )

        def shut(sock: socket.socket) -> None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked on this connection
            except OSError:
                pass

        def expire(message: str) -> None:
            with lock:
                if not expired.is_set():
                    why.append(message)
                expired.set()
                for sock in sockets:
                    shut(sock)

        transfer = threading.Timer(limits.transfer_s, expire, args=(transfer_msg,))
        transfer.daemon = True

        def watch(stream: Any) -> None:
            """Start the transfer clock at the first byte read from ``stream`` (status line or body)."""
            read = getattr(stream, "read", None)
            if read is None:
                return

            def timed_read(*args: Any, **kwargs: Any) -> bytes:
                data = read(*args, **kwargs)
                if data and not transfer.is_alive() and not transfer.finished.is_set():
                    with lock:
                        if not transfer.is_alive() and not transfer.finished.is_set():
                            transfer.start()
                return data

            try:
                stream.read = timed_read
            except AttributeError:  # a stream type that does not take the hook: the deadline still holds
                pass

        def trace(event: str, info: dict[str, Any]) -> None:
            if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
                stream = info.get("return_value")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if stream is not None:
                    watch(stream)
                if sock is not None:
                    with lock:
                        sockets.append(sock)
                        if expired.is_set():
                            shut(sock)

        headers = {**self._headers, **(self._secret_headers if origin(url) == self._origin else {})}
        step = min(limits.timeout_s, limits.deadline_s)
        timer = threading.Timer(limits.deadline_s, expire, args=(deadline_msg,))
        timer.daemon = True
        timer.start()
        try:
            request = self._client.build_request(
                "POST", url, content=data, headers=headers, timeout=httpx.Timeout(step), extensions={"trace": trace}
            )
            response = self._client.send(request, stream=True)
            try:
                status = response.status_code
                reason = response.reason_phrase or ""
                retry_after = response.headers.get("retry-after")
                if response.is_redirect:
                    return _Exchange(status, reason, b"", retry_after, self._redirect_target(response, path))
                if 300 <= status < 400:
                    raise ProviderError(
                        f"{self.where(path)}: HTTP {status} without a usable Location; set base_url to the server's "
                        "address"
                    )
                cap = limits.max_response_bytes
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > cap:
                    raise ProviderError(self._too_large(path, f"it announced {int(declared):,} bytes"))
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > cap:
                        raise ProviderError(self._too_large(path, f"more than {cap:,} bytes arrived"))
                    if expired.is_set():
                        raise _Retryable(why[0])
                    if status >= 400 and len(body) > 4096:
                        break  # enough of an error page for the message
                if expired.is_set():
                    raise _Retryable(why[0])
                return _Exchange(status, reason, bytes(body), retry_after)
            finally:
                response.close()
        except (ProviderError, _Retryable):
            raise
        except httpx.TimeoutException:
            if expired.is_set():
                raise _Retryable(why[0]) from None
            raise _Retryable(f"no answer within timeout_s={limits.timeout_s:g}s") from None
        except httpx.TransportError as exc:
            # connection refused/reset, a read cut by the deadline, a malformed HTTP answer...
            if expired.is_set():
                raise _Retryable(why[0]) from None
            raise _Retryable(f"connection failed: {self.redact(str(exc) or type(exc).__name__)}") from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"{self.where(path)}: {type(exc).__name__}: {self.redact(str(exc))}") from None
        finally:
            timer.cancel()
            transfer.cancel()

    def _too_large(self, path: str, what: str) -> str:
        return (
            f"{self.where(path)}: the answer exceeds max_response_mb={self.limits.max_response_mb:g} "
            f"({self.limits.max_response_bytes:,} bytes): {what}; it was not read further. "
            "Fix: lower max_tokens, or raise max_response_mb if such answers are expected"
        )

    def _redirect_target(self, response: Any, path: str) -> str:
        target = str(response.url.join(response.headers["location"]))
        if origin(target) != self._origin:
            raise ProviderError(
                f"{self.where(path)}: HTTP {response.status_code} redirect to another origin ({public_url(target)}) "
                "refused: "
                "the request is not re-sent, so the API key stays with the server it was meant for. "
                "Fix: set base_url to the address you mean to use"
            )
        if response.status_code not in (307, 308):
            raise ProviderError(
                f"{self.where(path)}: HTTP {response.status_code} redirect to {public_url(target)} (it would turn the "
                "POST "
                "into a GET). Fix: set base_url to that address"
            )
        return target
