"""One simulated host process: its pid, environment, logs, clock and error recorder.

The error recorder imitates CANN's error manager: failing calls record messages
(``record``) and ``take_messages`` hands them out, oldest first, and clears the list,
as ``aclGetRecentErrMsg()`` does for torch_npu.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from runtime_sim.plog import line as L
from runtime_sim.plog.error_block import CannMessage
from runtime_sim.plog.files import LogSettings, ProcessLog
from runtime_sim.plog.noise import Noise
from runtime_sim.runtime.clock import SimClock
from runtime_sim.runtime.profile import Stack


class SimProcess:
    """A host process that uses the NPU.

    ``log_root`` is the directory that plays ``ASCEND_PROCESS_LOG_PATH``;
    ``rank`` is the ``RANK`` environment variable torch_npu prints (-1 if unset).
    ``console`` collects what the user's terminal shows, in order.
    """

    def __init__(self, log_root: Path, pid: int, pname: str = "python3",
                 env: Optional[Mapping[str, str]] = None, stack: Optional[Stack] = None,
                 clock: Optional[SimClock] = None, seed: int = 0,
                 settings: Optional[LogSettings] = None) -> None:
        self.pid = pid
        self.pname = pname
        self.env: Dict[str, str] = dict(env or {})
        self.stack = stack or Stack()
        self.clock = clock or SimClock.at()
        self.rng = random.Random(seed)
        self.log = ProcessLog(Path(log_root), pid, pname,
                              settings or LogSettings.from_env(self.env))
        self.noise_device = 0
        self.console: List[str] = []
        self._messages: List[CannMessage] = []
        rank = self.env.get("RANK", "").strip()
        self.rank = int(rank) if rank.lstrip("-").isdigit() else -1
        # Worker threads: the task-queue thread and the runtime's error reporter.
        self.tid_main = pid
        self.tid_queue = pid + 1 + self.rng.randrange(40, 400)
        self.tid_report = self.tid_queue + 1 + self.rng.randrange(1, 30)

    # --- logging --------------------------------------------------------------------
    @property
    def shape(self) -> str:
        return self.stack.block_shape

    @property
    def modern(self) -> bool:
        """CANN 8.5+ wording ("execution failed, reason=x")."""
        return self.shape in ("v85", "v92")

    def plog(self, level: str, module: str, src: str, body: str,
             ts_us: Optional[int] = None) -> None:
        self.log.debug(level, module, src, body, self.clock.now if ts_us is None else ts_us)

    def plog_func(self, level: str, module: str, src: str, func: str, msg: str,
                  ts_us: Optional[int] = None, tid: Optional[int] = None,
                  space: bool = False) -> None:
        """A ``<tid> <Func>:<msg>`` line (RUNTIME / GE / ASCENDCL / FE)."""
        self.plog(level, module, src, L.tid_func(self.tid_main if tid is None else tid,
                                                 func, msg, space), ts_us)

    def run_log(self, level: str, module: str, src: str, body: str,
                ts_us: Optional[int] = None) -> None:
        self.log.run(level, module, src, body, self.clock.now if ts_us is None else ts_us)

    def noise(self, device: int = 0) -> Noise:
        return Noise(self.log, self.rng, device, [self.tid_main, self.tid_queue])

    def say(self, text: str) -> None:
        """Something the process prints to the terminal."""
        self.console.extend(text.split("\n"))

    # --- error manager --------------------------------------------------------------
    def record(self, code: str, text: str, where: str = "", ts_us: Optional[int] = None,
               title: Optional[str] = None) -> CannMessage:
        msg = CannMessage(code=code or "EE9999", text=text,
                          ts_us=self.clock.now if ts_us is None else ts_us, pid=self.pid,
                          where=where, title=title)
        self._messages.append(msg)
        return msg

    def take_messages(self) -> List[CannMessage]:
        out, self._messages = self._messages, []
        return out

    def peek_messages(self) -> List[CannMessage]:
        return list(self._messages)

    # --- wording that changed with CANN 8.5 -----------------------------------------
    def reason_text(self, api: str, reason: str) -> str:
        if self.modern:
            return "%s execution failed, reason=%s" % (api, reason)
        return "%s execute failed, reason=[%s]" % (api, reason)

    def reason_where(self) -> str:
        return L.inner_where("FuncErrorReason", "error_message_manage.cc",
                             65 if self.modern else 53)

    def call_where(self) -> str:
        return L.inner_where("ReportCallError", "log_inner.cpp", 148 if self.modern else 161)

    def record_reason(self, api: str, reason: str, ts_us: Optional[int] = None) -> None:
        self.record("EE9999", self.reason_text(api, reason), self.reason_where(), ts_us)

    def record_call(self, text: str, ts_us: Optional[int] = None) -> None:
        self.record("EE9999", text, self.call_where(), ts_us)

    def close(self) -> None:
        self.log.close()
