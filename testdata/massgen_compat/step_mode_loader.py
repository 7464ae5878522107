#!/usr/bin/env python3
"""MassGen's step-mode session reader, re-implemented for compatibility tests.

This reproduces the logic of two functions in MassGen's massgen/step_mode.py:

  load_session_dir_inputs(session_dir)   -> each agent's latest answer
  is_vote_stale(session_dir, voter, step) -> MassGen's stale-vote verdict

Source read (the logic is identical in all three copies):
  wahahaha123456/massgen-resume-review  massgen/step_mode.py
      @ d8921a60995877e2bdce9bd5170d82c4d18f12bc  (newest: per-agent last_action.json)
  Zeeeepa/MassGen                       massgen/step_mode.py
      @ e12fb7071988e4357bc2ba9c63ec120d1a0b43dd  (upstream v0.1.78 line)
  Toast552/llllIIlIII                   massgen/step_mode.py
      @ 197fbcaf2d37a51bffef4f01ecafe1743847e350

What it must keep from MassGen, because that is what we test against:
  * agents are the directories under agents/, in sorted order;
  * step directories are those whose name is all digits, in numeric order;
    anything else (workspace/, hidden temp dirs, lock files) is ignored;
  * in a step, answer.json wins over vote.json; an answer.json that does not
    parse is skipped (logged by MassGen) and does not count as an answer;
  * an agent's latest answer is the one in its highest step with a parsable
    answer.json; `answer` defaults to "";
  * a vote is stale if its vote.json is missing or does not parse, if
    seen_steps is missing or empty, or if any agent's latest answer step is
    greater than seen_steps.get(agent, 0).

Usage: step_mode_loader.py SESSION_DIR
Prints JSON: {"latest_answers": {agent: text}, "latest_answer_steps": {agent: n},
              "votes": [{"voter", "step", "target", "stale"}]}
where votes lists every step whose directory holds a vote.json and no
answer.json, whether or not it parses (target is null when it does not).
"""

import json
import sys
from pathlib import Path


def _step_dirs(agent_dir):
    dirs = [d for d in agent_dir.iterdir() if d.is_dir() and d.name.isdigit()]
    return sorted(dirs, key=lambda d: int(d.name))


def load_session_dir_inputs(session_dir):
    """Return {agent_id: {"latest_answer", "latest_answer_step", "latest_step"}}."""
    agents_dir = Path(session_dir) / "agents"
    if not agents_dir.exists():
        return {}
    agents = {}
    for agent_dir in sorted(agents_dir.iterdir()):
        if not agent_dir.is_dir():
            continue
        recorded = 0
        latest_answer = None
        latest_answer_step = None
        latest_step = 0
        for step_dir in _step_dirs(agent_dir):
            step = int(step_dir.name)
            latest_step = max(latest_step, step)
            answer_file = step_dir / "answer.json"
            vote_file = step_dir / "vote.json"
            if answer_file.exists():
                try:
                    data = json.loads(answer_file.read_text())
                except (json.JSONDecodeError, KeyError):
                    continue
                recorded += 1
                latest_answer = data.get("answer", "")
                latest_answer_step = step
            elif vote_file.exists():
                try:
                    json.loads(vote_file.read_text())
                except (json.JSONDecodeError, KeyError):
                    continue
                recorded += 1
        if recorded or latest_step > 0:
            agents[agent_dir.name] = {
                "latest_answer": latest_answer,
                "latest_answer_step": latest_answer_step,
                "latest_step": latest_step,
            }
    return agents


def latest_answer_steps(session_dir):
    return {
        agent: state["latest_answer_step"]
        for agent, state in load_session_dir_inputs(session_dir).items()
        if state["latest_answer_step"] is not None
    }


def is_vote_stale(session_dir, voter_id, vote_step):
    vote_file = Path(session_dir) / "agents" / voter_id / f"{vote_step:03d}" / "vote.json"
    if not vote_file.exists():
        return True
    try:
        vote = json.loads(vote_file.read_text())
    except (json.JSONDecodeError, KeyError):
        return True
    seen = vote.get("seen_steps")
    if not seen:
        return True
    for agent, step in latest_answer_steps(session_dir).items():
        if step > seen.get(agent, 0):
            return True
    return False


def main(argv):
    if len(argv) != 2:
        print("usage: step_mode_loader.py SESSION_DIR", file=sys.stderr)
        return 2
    session_dir = argv[1]
    inputs = load_session_dir_inputs(session_dir)
    out = {
        "latest_answers": {a: s["latest_answer"] for a, s in inputs.items() if s["latest_answer"] is not None},
        "latest_answer_steps": latest_answer_steps(session_dir),
        "votes": [],
    }
    agents_dir = Path(session_dir) / "agents"
    if agents_dir.exists():
        for agent_dir in sorted(agents_dir.iterdir()):
            if not agent_dir.is_dir():
                continue
            for step_dir in _step_dirs(agent_dir):
                if (step_dir / "answer.json").exists() or not (step_dir / "vote.json").exists():
                    continue
                step = int(step_dir.name)
                try:
                    target = json.loads((step_dir / "vote.json").read_text()).get("target")
                except (json.JSONDecodeError, KeyError, AttributeError):
                    target = None
                out["votes"].append({
                    "voter": agent_dir.name,
                    "step": step,
                    "target": target,
                    "stale": is_vote_stale(session_dir, agent_dir.name, step),
                })
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
