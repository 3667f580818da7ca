"""A TCP relay between Kafka clients and produce-proxy that cuts client
connections at the worst moment (issue 16, the client-side fault injector).

For a fraction of the requests it forwards (`rate`), the relay closes both the
client's connection and its own connection to the proxy either when the
proxy's answer to that request arrives, before any of it reaches the client
(the proxy read and answered it: the client must retry a batch that is
already in the log), or, for every other such request, `early_s` after
forwarding it (the batch is most likely still on its way upstream: the retry
must wait for it). Responses are matched to requests by order, which Kafka
guarantees per connection; acks=0 Produce gets no response, so the relay is
for acks=1/all clients. All on 127.0.0.1; threads only, bounded by the test.
"""
import random
import socket
import struct
import threading


class CutRelay:
    def __init__(self, target_port, rate=0.05, early_s=0.005, seed=1):
        self.target_port, self.rate, self.early_s = target_port, rate, early_s
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.cuts_at_answer = 0
        self.cuts_early = 0
        self.requests = 0
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self):
        with self.lock:
            self.requests = self.cuts_at_answer = self.cuts_early = 0

    def close(self):
        self.closed = True
        self.listener.close()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            _Pair(self, client, upstream).start()

    def decide(self):
        """None, "answer" or "early" for one request."""
        with self.lock:
            self.requests += 1
            if self.random.random() >= self.rate:
                return None
            early = self.random.random() < 0.5
            if early:
                self.cuts_early += 1
            else:
                self.cuts_at_answer += 1
            return "early" if early else "answer"


def _read_frame(sock):
    head = _read_exact(sock, 4)
    if head is None:
        return None
    body = _read_exact(sock, struct.unpack(">i", head)[0])
    return None if body is None else head + body


def _read_exact(sock, n):
    out = b""
    while len(out) < n:
        try:
            chunk = sock.recv(n - len(out))
        except OSError:
            return None
        if not chunk:
            return None
        out += chunk
    return out


class _Pair:
    def __init__(self, relay, client, upstream):
        self.relay, self.client, self.upstream = relay, client, upstream
        self.lock = threading.Lock()
        self.fates = []  # per forwarded request awaiting its answer, in order
        self.dead = False

    def start(self):
        threading.Thread(target=self._requests, daemon=True).start()
        threading.Thread(target=self._answers, daemon=True).start()

    def cut(self):
        with self.lock:
            if self.dead:
                return
            self.dead = True
        for s in (self.client, self.upstream):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def _requests(self):
        while True:
            frame = _read_frame(self.client)
            if frame is None:
                return self.cut()
            fate = self.relay.decide()
            with self.lock:
                self.fates.append(fate)
            try:
                self.upstream.sendall(frame)
            except OSError:
                return self.cut()
            if fate == "early":
                threading.Timer(self.relay.early_s, self.cut).start()

    def _answers(self):
        while True:
            frame = _read_frame(self.upstream)
            if frame is None:
                return self.cut()
            with self.lock:
                fate = self.fates.pop(0) if self.fates else None
            if fate == "answer":
                return self.cut()
            try:
                self.client.sendall(frame)
            except OSError:
                return self.cut()
