"""Which part of the real-failure corpus a case belongs to (PROTOCOL.md, "The split")."""
import hashlib

TEST_PERCENT = 35


def part(url: str) -> str:
    """'test' or 'dev', decided once by a hash of the thread's URL."""
    digest = hashlib.sha256(url.strip().encode("utf-8")).hexdigest()
    return "test" if int(digest[:8], 16) % 100 < TEST_PERCENT else "dev"
