"""The team's mailboxes: messages wrapped for the model, broadcast, the lead's wait."""

from __future__ import annotations

import asyncio

from codeloop.teams.team_mail import LEAD, Roster


def test_messages_are_wrapped_broadcast_and_the_lead_stops_waiting_when_nobody_works() -> None:
    async def scenario() -> None:
        roster = Roster()
        roster.create("docs")
        release = asyncio.Event()

        async def writer() -> None:
            await release.wait()

        roster.join("writer", writer())
        roster.join("tester", writer())
        await roster.post("writer", LEAD, 'a "quoted" <tag>', summary='say "hi"')
        text = await roster.lead_turn(asyncio.Event())
        assert text is not None
        assert text.startswith(
            '<teammate-message teammate_id="writer" summary="say &quot;hi&quot;">\n'
        )
        assert 'a "quoted" <tag>' in text  # the body as written
        assert await roster.post(LEAD, "*", "all") == ["writer", "tester"]
        assert await roster.receive("tester") is not None
        # Teammates still working: the lead waits; once none is, it gets None.
        waiting = asyncio.ensure_future(roster.lead_turn(asyncio.Event()))
        await roster.set_working("writer", False)
        await asyncio.sleep(0)  # a turn of the loop: the lead would see it now
        assert not waiting.done()
        await roster.set_working("tester", False)
        assert await waiting is None
        release.set()
        await roster.aclose()
        assert await roster.receive("writer") is None  # closed: an idle teammate stops

    asyncio.run(scenario())


def test_an_interrupt_ends_the_leads_wait() -> None:
    async def scenario() -> None:
        roster = Roster()
        roster.create("docs")
        never = asyncio.Event()

        async def writer() -> None:
            await never.wait()

        roster.join("writer", writer())
        abort = asyncio.Event()
        waiting = asyncio.ensure_future(roster.lead_turn(abort))
        await asyncio.sleep(0)
        assert not waiting.done()
        abort.set()
        assert await waiting is None
        await roster.aclose()

    asyncio.run(scenario())
