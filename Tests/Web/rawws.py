"""A WebSocket client small enough to misbehave on purpose (RFC 6455 by hand): the attack tests
need what a browser will not do, a wrong Origin, a frame of 100 MB, a client that never reads."""
import base64, json, os, socket, struct


class Refused(Exception):
    def __init__(self, status, head):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.head = head


class RawWebSocket:
    def __init__(self, url, cookie=None, origin="same", timeout=30):
        rest = url.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host, _, port = authority.partition(":")
        self.sock = socket.create_connection((host, int(port or 80)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET /{path} HTTP/1.1", f"Host: {authority}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if origin == "same":
            lines.append(f"Origin: http://{authority}")
        elif origin:
            lines.append(f"Origin: {origin}")
        if cookie:
            lines.append(f"Cookie: mediahost={cookie}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            head += chunk
        head, _, self.buffer = head.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head else 0
        if status != 101:
            self.sock.close()
            raise Refused(status, head.decode(errors="replace"))

    def send_frame(self, payload, opcode=1):
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 1 << 16 else _mask_fast(payload, mask)
        self.sock.sendall(header + mask + masked)

    def send(self, message):
        self.send_frame(json.dumps(message).encode())

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def receive_frame(self):
        """(opcode, payload) of the next frame."""
        first, second = self._read(2)
        n = second & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return first & 0x0F, self._read(n)

    def receive(self):
        """The next JSON message (pings answered, a close raised as ConnectionError)."""
        while True:
            opcode, payload = self.receive_frame()
            if opcode == 9:
                self.send_frame(payload, opcode=10)
            elif opcode == 8:
                code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                raise ConnectionError(f"closed {code} {payload[2:].decode(errors='replace')}")
            elif opcode == 1:
                return json.loads(payload)

    def call(self, method, params=None, id=1):
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            answer = self.receive()
            if isinstance(answer, dict) and answer.get("id") == id:
                return answer

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _mask_fast(payload, mask):
    # Big frames: masked by integers, not byte by byte.
    count = len(payload)
    whole = int.from_bytes(mask * (count // 4 + 1), "little")
    return (int.from_bytes(payload, "little") ^ (whole & ((1 << (8 * count)) - 1))).to_bytes(count, "little")
