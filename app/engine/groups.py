"""Model groups: BENCHMARKING works on one (provider, model) target at a time.

A mixin for Slice: pick the group to work on, leave it (unloading an Ollama model so the next
one gets the memory), fail its items when its warm-up fails for good, or mark them
CANT_BE_FINISHED when they can never be asked.
"""

from ..models import CANT_BE_FINISHED
from ..models import FAILED
from ..models import NEW
from ..models import Item
from ..models import RunTarget

STICKY_SECONDS = 30.0  # wait this long for a group's backoffs before switching model groups


class Groups:
    """Mixin for Slice: which group to work on and what happens to a group's items."""

    def _pick_group(self):
        """The target to work on: the current group while it has work soon, else the first
        target (in run order) with a claimable item and no warm-up waiting for its retry."""
        current = self.state.group
        if current is not None:
            if self._claimable(NEW, current):
                return self.targets[current]
            wake = self._next_retry(current)
            if wake is not None and (wake - self.now()).total_seconds() <= STICKY_SECONDS:
                return None  # a short backoff: keep the model loaded and wait for it
        now = self.now()
        for target in sorted(self.targets.values(), key=lambda t: (t.position, t.id)):
            if self.state.warmups.waiting(target.id, now):
                continue
            if self._claimable(NEW, target.id):
                return target
        return None

    def _leave_group(self):
        """Unload the current group's Ollama model so the next model gets the memory."""
        current = self.targets.get(self.state.group) if self.state.group else None
        self.state.group = None
        if current is None or current.provider is None or current.provider.type != "OLLAMA":
            return
        try:
            error = self.state.adapter(current.provider).unload(current.model)
        except Exception as exc:  # noqa: BLE001 - the model unloads itself after keep_alive
            error = getattr(exc, "message", None) or repr(exc)
        if error:
            self.emit(
                "unload_failed",
                f"Could not unload {current.provider_name}/{current.model}: {error}",
                level="WARNING",
            )
        else:
            self.emit("unloaded", f"Unloaded {current.provider_name}/{current.model}")

    def fail_group(self, target, message):
        """The group's warm-up failed for good: its unanswered items fail, the run goes on."""
        now = self.now()
        RunTarget.update(warmup_error=message).where(RunTarget.id == target.id).execute()
        count = self._settle(
            (Item.target == target) & (Item.status == NEW),
            FAILED,
            "warmup",
            f"warm-up failed: {message}",
            now,
        )
        self.emit(
            "warmup_failed",
            f"Warm-up of {target.provider_name}/{target.model} failed: "
            f"{message}; its {count} items failed, the run goes on",
            level="ERROR",
            data={"targetId": target.id, "failed": count, "error": message},
            now=now,
        )

    def _cant_finish_group(self, target, why):
        """The group can never be asked (its provider is gone): its items can't be finished."""
        now = self.now()
        count = self._settle(
            (Item.target == target) & (Item.status == NEW),
            CANT_BE_FINISHED,
            "answer",
            f"can't be finished: {why}",
            now,
        )
        self.emit(
            "cant_be_finished",
            f"{target.provider_name}/{target.model}: {count} items "
            f"can't be finished: {why}; the run goes on",
            level="ERROR",
            data={"targetId": target.id, "count": count, "error": why},
            now=now,
        )

    def _settle(self, where, status, stage, error, now):
        """Settle the run's items matching `where` for good (status, stage and error; no retry
        pending); returns how many."""
        return (
            Item.update(
                status=status,
                error_stage=stage,
                error_msg=error,
                next_retry_at=None,
                updated_at=now,
            )
            .where((Item.run == self.run) & where)
            .execute()
        )
