"""The offline runtime as a program meets it: registrations answered while the body still declares (so a
large plan does not hold every pending registration at once), every resource recorded wherever the program
declares it (in the body, in a callback that runs while the body declares, and after it), and the SDK's test
for unknown values answering the same without leaving reference cycles."""
from __future__ import annotations

import gc

import pulumi
from pulumi.output import UNKNOWN
from pulumi.runtime import rpc, settings

from gke_ai_batch.offline.engine.runtime import record
from gke_ai_batch.offline.engine.unknowns import contains_unknowns

THING = "test:index:Thing"


def test_registrations_are_answered_while_the_program_is_still_declaring():
    declared_before_first_answer = []

    def program() -> None:
        answered = settings.get_monitor().registrations
        for i in range(3000):  # when the loop waited for the body's end: all of them, and no answer yet
            pulumi.ComponentResource(THING, f"thing-{i}")
            if answered:
                declared_before_first_answer.append(i + 1)
                return

    regs = record(program, "answering")
    assert declared_before_first_answer, "no registration answered while 3,000 were declared"
    assert len([r for r in regs if r.type == THING]) == declared_before_first_answer[0]


def test_resources_declared_in_callbacks_during_and_after_the_body_are_all_recorded():
    def program() -> None:
        for i in range(100):  # the callbacks below run in the passes these declarations give the loop
            thing = pulumi.ComponentResource(THING, f"thing-{i}")
            thing.urn.apply(lambda _, i=i: pulumi.ComponentResource(THING, f"from-callback-{i}"))
        last = pulumi.ComponentResource(THING, "last")  # answered only after the body: no declaration follows
        under_last = pulumi.ResourceOptions(parent=last)
        last.urn.apply(lambda _: pulumi.ComponentResource(THING, "after-body", opts=under_last))

    regs = record(program, "callbacks")
    names = {r.name for r in regs if r.type == THING}
    numbered = {f"{kind}-{i}" for kind in ("thing", "from-callback") for i in range(100)}
    assert names == {"last", "after-body"} | numbered
    assert next(r for r in regs if r.name == "after-body").parent == next(r for r in regs if r.name == "last").urn


class InputType(dict):  # type: ignore[type-arg]  # as the SDK's input types: a field can shadow a dict method
    values = None


def test_looking_for_unknowns_answers_as_the_sdk_does():
    sdk = rpc.contains_unknowns  # outside a plan: the SDK's own
    shared = {"a": 1}
    looping: dict[str, object] = {"spec": [1]}
    looping["self"] = looping
    values = [None, 1, "x", UNKNOWN, [1, [2, UNKNOWN]], {"a": {"b": [UNKNOWN]}}, {"a": [shared, shared]},
              looping, {"values": UNKNOWN}, [{"items": [None]}], InputType(spec=UNKNOWN)]
    assert [contains_unknowns(v) for v in values] == [sdk(v) for v in values]
    assert [sdk(v) for v in values].count(True) == 5


def test_looking_for_unknowns_in_a_plan_leaves_no_cycles_to_collect():
    left = []

    def program() -> None:
        gc.collect()
        gc.disable()
        try:
            for _ in range(100):
                rpc.contains_unknowns({"spec": {"containers": [{"name": "main"}]}})
            left.append(gc.collect())
        finally:
            gc.enable()

    record(program, "unknowns")
    assert left[0] < 100, f"{left[0]} objects in reference cycles after 100 checks"
