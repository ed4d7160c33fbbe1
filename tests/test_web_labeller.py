"""--labeller web without a browser: the page's server (pref_interface.web) between real queues, spoken to
over real HTTP (requests, and a raw socket for what no client library sends): the token, bad requests,
answers sent twice, several pages, pages that go quiet, the clips' pixels, and what reaches the
preference queue, in order."""
import asyncio
import io
import queue
import socket
import threading
import time

import numpy as np
import pytest
import requests

from drlhp.config import PrefConfig, RunConfig
from drlhp.processes.messages import MU_EQUAL, MU_LEFT, Segment
from drlhp.processes.ports import PrefInterfacePorts
from pref_interface.process import PrefInterface
from pref_interface.web import WebLabeller
from pref_interface.web_server import MAX_BODY, clip_png

T = 6


def seg(value: int, colour: bool = True) -> Segment:
    rng = np.random.default_rng(value)
    frames = rng.integers(0, 256, (T, 6, 7, 3) if colour else (T, 6, 7), dtype=np.uint8)
    obs = np.repeat(rng.integers(0, 256, (T, 8, 8, 1), dtype=np.uint8), 4, axis=-1)
    return Segment(obs, frames, np.full(T, value, np.float32), "Test-v0", 0, value).check()


class Served:
    """A WebLabeller on a free port of 127.0.0.1, its loop in a thread, over a PrefInterface with real queues."""

    def __init__(self, tmp_path, n_segments=8, n_labels=20, segments=None, **options):
        cfg = RunConfig(mode="gather_initial_prefs", env="MovingDot-v0", log_interval=0.2,
                        prefs=PrefConfig(n_initial_prefs=n_labels, segment_pool_size=20))
        self.segment_queue, self.preference_queue, self.stop_event = queue.Queue(), queue.Queue(64), threading.Event()
        self.segments = segments if segments is not None else [seg(v) for v in range(n_segments)]
        for s in self.segments:
            self.segment_queue.put(s)
        ports = PrefInterfacePorts(stop_event=self.stop_event, segment_queue=self.segment_queue,
                                   preference_queue=self.preference_queue)
        self.iface = PrefInterface(cfg, ports, str(tmp_path), 1)
        self.lines = []
        self.server = WebLabeller(self.iface, log=lambda *a, **k: self.lines.append(" ".join(a)),
                                  **{"hold_s": 60.0, **options})
        self.figures = {}
        self.thread = threading.Thread(target=lambda: self.figures.update(asyncio.run(self.server.run())))
        self.thread.start()
        assert self.server.ready.wait(10)
        self.url = f"http://127.0.0.1:{self.server.port}"
        self.headers = {"X-Token": self.server.token}

    def get(self, path, **kw):
        return requests.get(self.url + path, headers=self.headers, timeout=10, **kw)

    def post(self, path, body=None, data=None):
        """``body`` as JSON, or ``data``: the raw bytes."""
        return requests.post(self.url + path, json=body, data=data, headers=self.headers, timeout=10)

    def state(self, page):
        reply = self.get(f"/api/state?page={page}")
        assert reply.status_code == 200, reply.text
        return reply.json()

    def answer(self, page, number, kind):
        return self.post("/api/answer", {"page": page, "pair": number, "answer": kind})

    def sent(self) -> list:
        """Preferences on the queue now."""
        out = []
        while True:
            try:
                out.append(self.preference_queue.get_nowait())
            except queue.Empty:
                return out

    def stop(self) -> list:
        """Stop the run (as Ctrl-C does), close the interface; every preference sent, the sentinel left out."""
        self.stop_event.set()
        self.thread.join(10)
        assert not self.thread.is_alive()
        self.iface.close()
        sent = self.sent()
        assert sent[-1] is None
        return sent[:-1]


@pytest.fixture
def served(tmp_path):
    made = []

    def make(**kw):
        made.append(Served(tmp_path, **kw))
        return made[-1]

    yield make
    for s in made:
        s.stop_event.set()
        s.thread.join(10)


def _pair_ids(pref):
    return pref.segment_1.id, pref.segment_2.id


def test_without_the_token_every_request_gets_403_and_nothing_else(served):
    s = served()
    page = "a" * 16
    for token in ({}, {"X-Token": "wrong"}, {"X-Token": s.server.token[:-1]}):
        for method, path in (("GET", "/"), ("GET", f"/api/state?page={page}"), ("GET", "/clip/1/left"),
                             ("POST", "/api/answer"), ("POST", "/api/undo"), ("GET", "/no/such/path"),
                             ("GET", "/?token=nope")):
            reply = requests.request(method, s.url + path, headers=token, json={"page": page}, timeout=10)
            assert reply.status_code == 403 and reply.text == "403: forbidden\n", (method, path, reply.text)
    assert s.server.pages == {}  # nothing was created by those requests
    assert requests.get(f"{s.url}/?token={s.server.token}", timeout=10).status_code == 200  # in the address
    page_html = s.get("/")
    assert page_html.status_code == 200 and "which clip is better?" in page_html.text
    assert page_html.headers["Server"] == "drlhp"  # no library name and version to the network
    assert s.state(page)["pairs"]


def test_bad_requests_get_a_clear_4xx_and_the_server_keeps_serving(served):
    s = served()
    page = "b" * 16
    first, second = (p["number"] for p in s.state(page)["pairs"])
    checks = [
        (s.answer(page, 999, "left"), 404, "no pair 999"),
        (s.answer(page, second, "left"), 409, "not the one on this page's screen"),
        (s.answer(page, first, "sideways"), 400, "answer: one of"),
        (s.answer(page, "1", "left"), 400, "pair"),
        (s.answer("x", first, "left"), 400, "page"),
        (s.get("/api/state?page=../../etc"), 400, "page"),
        (s.post("/api/answer", data=b"{not json"), 400, "JSON object"),
        (s.post("/api/answer", data=b"[1, 2]"), 400, "JSON object"),
        (s.post("/api/answer", data=b"\xff\xfe" * 10), 400, "JSON object"),
        (s.post("/api/answer", data=b"x" * (MAX_BODY + 1)), 413, ""),
        (s.post("/api/answer", data=b" " * 10_000_000), 413, ""),
        (s.get("/clip/999/left"), 404, "no pair 999"),
        (s.get(f"/clip/{first}/middle"), 404, ""),
        (s.get("/api/answer"), 405, ""),
    ]
    for reply, status, text in checks:
        assert reply.status_code == status, (status, reply.status_code, reply.text)
        assert text in reply.json()["error"] and "Traceback" not in reply.text
    # bytes that are not HTTP at all: aiohttp's parser answers 400 and closes the connection
    with socket.create_connection(("127.0.0.1", s.server.port), timeout=10) as raw:
        raw.sendall(b"\x00\x01GARBAGE\r\n\r\n")
        assert raw.recv(200).split(b" ")[1] == b"400"
    with socket.create_connection(("127.0.0.1", s.server.port), timeout=10) as raw:  # a header line of 1 MB
        raw.sendall(b"GET / HTTP/1.1\r\nX-Huge: " + b"a" * 1_000_000 + b"\r\n\r\n")
        assert raw.recv(200).split(b" ")[1].startswith(b"4")
    # still serving: the same page answers its pair
    assert s.answer(page, first, "left").status_code == 200
    assert s.thread.is_alive() and not s.stop_event.is_set()
    assert [p.mu for p in s.stop()] == [MU_LEFT]


def test_answers_in_order_once_each_undo_and_the_previous_answer_queued_before_the_next_pair(served):
    s = served()
    page = "c" * 16
    shown = []
    pairs = {}

    def on_screen():
        state = s.state(page)
        number = state["pairs"][0]["number"]
        pairs[number] = s.server.out[number]
        return number

    n1 = on_screen()
    reply = s.answer(page, n1, "left").json()
    assert reply["answers_here"] == 1 and reply["can_undo"] is True
    assert s.answer(page, n1, "left").json()["message"] == f"pair {n1} was answered already"  # sent twice
    assert s.sent() == []  # held for undo
    n2 = reply["pairs"][0]["number"]
    assert n2 != n1
    pairs[n2] = s.server.out[n2]
    s.answer(page, n2, "right")
    sent = s.sent()
    assert [p.mu for p in sent] == [MU_LEFT]  # the answer before is on the queue when the reply comes
    undone = s.post("/api/undo", {"page": page}).json()
    assert undone["pairs"][0]["number"] == n2 and undone["can_undo"] is False
    assert "nothing to undo" in s.post("/api/undo", {"page": page}).json()["message"]  # one level
    s.answer(page, n2, "equal")
    n3 = on_screen()
    s.answer(page, n3, "cant_tell")  # discarded
    shown += [n1, n2]
    sent += s.stop()  # the held answer (can't tell) is final at exit: nothing to send for it
    assert [p.mu for p in sent] == [MU_LEFT, MU_EQUAL]
    assert [_pair_ids(p) for p in sent] == [(pairs[n][0].id, pairs[n][1].id) for n in shown]
    assert s.figures["answers"] == 3 and s.figures["answers_undone"] == 1 and s.figures["answers_sent_twice"] == 1
    assert s.iface.given == 2 and s.iface.discarded == 1


def test_two_pages_get_different_pairs_and_every_answer_arrives(served):
    s = served(n_segments=10, n_labels=8)
    pages = ["page-one-x", "page-two-y"]
    given = {page: [] for page in pages}
    for _ in range(3):
        for page in pages:
            state = s.state(page)
            if state["pairs"]:
                number = state["pairs"][0]["number"]
                given[page].append((number, s.server.out[number]))
                assert s.answer(page, number, "left").status_code == 200
    numbers = [n for page in pages for n, _ in given[page]]
    assert len(numbers) == len(set(numbers)) == 6
    segments = [(a.id, b.id) for page in pages for _, (a, b) in given[page]]
    assert len({tuple(sorted(p)) for p in segments}) == 6  # no pair of clips asked twice
    # the schedule allows 8: 6 answered, the rest on the pages; no third page gets a pair now
    assert s.state("page-three")["pairs"] == []
    sent = s.stop()
    assert sorted(_pair_ids(p) for p in sent) == sorted(segments)


def test_a_pair_left_unanswered_goes_back_to_the_pool(served):
    s = served(n_segments=6, n_labels=3, abandon_s=0.5)
    quiet = s.state("quiet-page")["pairs"]
    assert [p["number"] for p in quiet] == [1, 2]
    assert [p["number"] for p in s.state("busy-page")["pairs"]] == [3]  # the schedule allows 3
    deadline = time.monotonic() + 10
    while "quiet-page" in s.server.pages:  # the tab was closed: no request from it any more
        assert time.monotonic() < deadline
        s.state("busy-page")
        time.sleep(0.1)
    busy = s.state("busy-page")["pairs"]
    assert [p["number"] for p in busy] == [3, 1]  # the quiet page's first pair, to the next page that asks
    for number in (3, 1, 2):
        state = s.state("busy-page")
        assert state["pairs"][0]["number"] == number
        s.answer("busy-page", number, "right")
    # a page that says goodbye (pagehide) gives its pairs back at once
    s2 = served(n_segments=6, n_labels=3)
    assert [p["number"] for p in s2.state("closing-page")["pairs"]] == [1, 2]
    assert s2.post("/api/bye", {"page": "closing-page"}).status_code == 200
    assert [p["number"] for p in s2.state("other-page")["pairs"]] == [1, 2]
    assert len(s.stop()) == 3 and s.figures["pairs_returned"] == 2


def test_a_clip_is_its_frames_lossless_in_colour(served):
    from PIL import Image

    s = served()
    number = s.state("clip-page-1")["pairs"][0]["number"]
    pair = s.server.out[number]
    for side, segment in (("left", pair[0]), ("right", pair[1])):
        reply = s.get(f"/clip/{number}/{side}")
        assert reply.status_code == 200 and reply.headers["Content-Type"] == "image/png"
        sheet = np.asarray(Image.open(io.BytesIO(reply.content)))
        assert sheet.shape == (T * 6, 7, 3)
        np.testing.assert_array_equal(sheet.reshape(T, 6, 7, 3), segment.frames)
    grey = seg(3, colour=False).frames
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(clip_png(grey)))).reshape(grey.shape), grey)
    s.stop()


def test_a_clip_s_simulator_states_are_served_exactly_and_only_for_a_pair_that_has_them(served):
    """/states/N/left|right gives the states a MuJoCo clip was drawn from (what a scripted person judges: bench/
    page_person.py), every float as recorded, with the fall flags; 404 for clips without states, or no such pair;
    403 without the token."""
    rng = np.random.default_rng(7)
    standing = np.array([0, 1.25, 0, 0, 0, 0] + [0] * 6, np.float64)  # Hopper-v5's qpos, qvel at rest: the drawer
    with_states = []  # draws them (a MuJoCo pair is offered once drawn)
    for v in range(4):
        base = seg(v)
        falls = np.zeros(T, bool)
        falls[v % T] = True
        with_states.append(Segment(base.obs, base.frames, base.true_rewards, "Hopper-v5", 0, v,
                                   states=standing + rng.normal(scale=0.01, size=(T, 12)),
                                   falls=falls if v % 2 else None).check())
    s = served(segments=with_states)
    deadline = time.monotonic() + 180
    while not (pairs := s.state("states-page-1")["pairs"]):
        assert time.monotonic() < deadline, "no pair drawn after 180 s"
        time.sleep(0.2)
    number = pairs[0]["number"]
    pair = s.server.out[number]
    for side, segment in (("left", pair[0]), ("right", pair[1])):
        reply = s.get(f"/states/{number}/{side}")
        assert reply.status_code == 200 and reply.headers["Content-Type"].startswith("application/json")
        got = reply.json()
        assert got["clip"] == segment.id and got["env_id"] == "Hopper-v5" and got["number"] == number
        states = np.array(got["states"], np.float64)
        assert states.shape == (T, 12) and np.array_equal(states, segment.states)  # bit for bit
        assert got["falls"] == (None if segment.falls is None else segment.falls.tolist())
        assert "rewards" not in got  # a MuJoCo clip's reward is the oracle's: no scripted person reads it
    assert requests.get(f"{s.url}/states/{number}/left", timeout=10).status_code == 403
    assert s.get(f"/states/{number + 100}/left").status_code == 404
    s.stop()
    plain = served()
    number = plain.state("states-page-2")["pairs"][0]["number"]
    reply = plain.get(f"/states/{number}/left")
    assert reply.status_code == 404 and "no simulator states" in reply.json()["error"]
    plain.stop()


def test_an_atari_clip_s_ram_and_game_rewards_are_served_exactly(served):
    """An Atari clip's states are the console's RAM after each step (envs/atari_watch.py): /states serves them with
    the game's reward each step, what an Atari goal scores (Enduro's passes: bench/page_person.py's Judge)."""
    rng = np.random.default_rng(8)
    atari = []
    for v in range(4):
        base = seg(v)
        rewards = rng.choice(np.array([-1, 0, 0, 0, 1], np.float32), size=T)
        atari.append(Segment(base.obs, base.frames, rewards, "EnduroNoFrameskip-v4", 0, v,
                             states=rng.integers(0, 256, size=(T, 128)).astype(np.float64)).check())
    s = served(segments=atari)
    number = s.state("atari-states")["pairs"][0]["number"]
    pair = s.server.out[number]
    for side, segment in (("left", pair[0]), ("right", pair[1])):
        got = s.get(f"/states/{number}/{side}").json()
        assert got["env_id"] == "EnduroNoFrameskip-v4" and got["clip"] == segment.id and got["falls"] is None
        assert np.array_equal(np.array(got["states"], np.float64), segment.states)
        assert np.array_equal(np.array(got["rewards"], np.float32), segment.true_rewards)
    s.stop()


def test_the_address_has_the_token_and_a_taken_port_is_one_line(served):
    s = served()
    assert any(f"http://127.0.0.1:{s.server.port}/?token={s.server.token}" in line for line in s.lines)
    with pytest.raises(RuntimeError, match=f"cannot serve the page on 127.0.0.1:{s.server.port}"):
        WebLabeller(s.iface, port=s.server.port)
    other = WebLabeller(s.iface)
    assert other.token != s.server.token and len(other.token) >= 32
    other.sock.close()
    s.stop()


# ---- the review tool's page (python -m pref_interface.review --web) ------------------------------------
def _saved_db(path, n=4):
    from drlhp.processes.messages import MU_RIGHT, Preference
    from drlhp.reward.pref_db import PrefDB

    db = PrefDB(seed=0)
    for i, mu in zip(range(n), (MU_LEFT, MU_RIGHT, MU_EQUAL, MU_LEFT)):
        db.add(Preference(seg(10 + 2 * i), seg(11 + 2 * i), mu))
    db.save(path)
    return db


def test_the_review_page_lists_relabels_deletes_undoes_and_saves(tmp_path):
    from drlhp.processes.messages import MU_RIGHT
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.review import Review
    from pref_interface.review_web import ReviewServer

    path = tmp_path / "prefs.npz"
    _saved_db(path)
    review = Review(PrefDB.load(path))

    def save():
        review.apply()
        review.db.save(path)
        return "saved"

    server = ReviewServer(review, save)
    thread = threading.Thread(target=lambda: asyncio.run(server.run()))
    thread.start()
    try:
        assert server.ready.wait(10)
        url, headers = f"http://127.0.0.1:{server.port}", {"X-Token": server.token}
        assert requests.get(url + "/api/review", timeout=10).status_code == 403
        state = requests.get(url + "/api/review", headers=headers, timeout=10).json()
        orders = [p["order"] for p in state["pairs"]]
        assert [p["recorded"] for p in state["pairs"]] == ["left", "right", "equal", "left"]
        assert state["chosen"] == orders[0]
        sheet = requests.get(f"{url}/clip/{orders[1]}/right", headers=headers, timeout=10)
        from PIL import Image

        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(sheet.content))).reshape(T, 6, 7, 3),
                                      seg(13).frames)

        def edit(order, change, status=200):
            reply = requests.post(url + "/api/edit", json={"order": order, "change": change}, headers=headers,
                                  timeout=10)
            assert reply.status_code == status, reply.text
            return reply.json()

        edit(orders[0], "right")
        edit(orders[1], "delete")
        state = edit(orders[3], "delete")
        assert state["deleted"] == 2 and state["unsaved"] is True
        requests.post(url + "/api/undo", json={}, headers=headers, timeout=10)  # the last delete taken back
        assert "no pair 999" in edit(999, "left", 404)["error"]
        assert "change" in edit(orders[2], "sideways", 400)["error"]
        assert requests.post(url + "/api/save", json={}, headers=headers, timeout=10).json()["message"] == "saved"
    finally:
        server.stop_event.set()
        thread.join(10)
    saved = PrefDB.load(path)
    entries = sorted(saved.entries("train") + saved.entries("val"), key=lambda e: e.order)
    assert [tuple(e.mu) for e in entries] == [MU_RIGHT, MU_EQUAL, MU_LEFT]  # relabelled; deleted; kept; kept


def test_run_py_refuses_an_address_it_cannot_serve_on_in_one_line(tmp_path, cli):
    """A taken --web_port, or a --web_host that is not this machine's: one line, exit 2, before anything
    starts (no run directory)."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        for flags, why in ((["--web_port", port], f"127.0.0.1:{port}: Address already in use (choose another"),
                           (["--web_host", "192.0.2.1"], "192.0.2.1:0: Cannot assign requested address (--web_host")):
            proc = cli("--env", "MovingDot-v0", "--labeller", "web", *flags, "--run_dir", tmp_path / "run", timeout=60)
            lines = proc.stderr.strip().splitlines()
            assert proc.returncode == 2 and len(lines) == 1, proc.stderr
            assert lines[0].startswith("run.py: error: cannot serve the page on ") and why in lines[0]
    assert not (tmp_path / "run").exists()


def test_the_page_shows_the_labels_to_go_and_how_long_at_the_pace_so_far(served):
    """The page's count of labels still planned (given ones out, held ones too, "can't tell" not) and the time
    they take at this page's pace so far: labels given here over the time since the first pair went out."""
    s = served(n_segments=10, n_labels=8)  # gather_initial_prefs: 8 labels planned
    page = "p" * 16
    state = s.state(page)
    assert state["labels_to_go"] == 8 and state["eta_s"] is None
    kinds = ["left", "cant_tell", "right", "equal"]
    for kind in kinds:
        state = s.answer(page, state["pairs"][0]["number"], kind).json()
    assert state["labels_to_go"] == 8 - 3  # 3 labels (one held for undo), the "can't tell" not one
    s.server.first_pair_at, s.server.clock = 1000.0, lambda: 1060.0  # a minute since the first pair: 3 labels
    state = s.state(page)
    assert state["labels_to_go"] == 5 and state["eta_s"] == 5 * 20.0
    state = s.post("/api/undo", {"page": page}).json()  # the held label taken back: one more to go, and 2 labels
    assert state["labels_to_go"] == 6 and state["eta_s"] is None  # are too few for a pace
    state = s.answer(page, state["pairs"][0]["number"], "left").json()
    assert state["labels_to_go"] == 5 and state["eta_s"] == 5 * 20.0


@pytest.mark.slow  # a real run of the three processes
def test_a_slow_person_gets_every_planned_label_before_the_run_ends(tmp_path):
    """A scripted person slower than the policy answers in the page of a real `--labeller web` run with a tiny
    budget (500 agent steps, 3 + 6 labels planned): the policy waits for the labels, and the run ends by itself
    only once every planned label is in the database; the page counts the labels to go down to 0."""
    import json
    import os
    import re
    import subprocess
    import sys

    from conftest import REPO
    from drlhp.reward.pref_db import PrefDB

    run_dir, out = tmp_path / "run", tmp_path / "out.txt"
    args = ["--env", "MovingDot-v0", "--labeller", "web", "--preset", "none", "--n_envs", 4, "--segment_length", 5,
            "--n_initial_epochs", 1, "--n_predictors", 1, "--reward_batch_size", 2, "--n_initial_prefs", 3,
            "--n_labels", 6, "--million_timesteps", 0.0005, "--person_pace_margin", 1, "--log_interval", 1,
            "--run_dir", run_dir]
    with open(out, "w") as stdout:
        proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), *map(str, args)], cwd=REPO, stdout=stdout,
                                stderr=subprocess.STDOUT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    try:
        deadline = time.monotonic() + 900
        while not (m := re.search(r"label in a browser: (http://[\d.:]+)/\?token=([\w-]+)", out.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()[-3000:]
            time.sleep(0.2)
        url, headers, page = m.group(1), {"X-Token": m.group(2)}, "slowperson1"
        to_go, answered = [], 0
        while proc.poll() is None:
            assert time.monotonic() < deadline, out.read_text()[-3000:]
            try:
                state = requests.get(f"{url}/api/state?page={page}", headers=headers, timeout=10).json()
                to_go.append(state["labels_to_go"])
                if state["pairs"]:
                    # slower than the policy: 6 labels would take it past its 500 steps (a label's worth of
                    # steps, about 80, is a few updates of 20 agent steps: well under the 1 s; it was 2 s)
                    time.sleep(1.0)
                    requests.post(f"{url}/api/answer", json={"page": page, "pair": state["pairs"][0]["number"],
                                                             "answer": "left"}, headers=headers, timeout=10)
                    answered += 1
                else:
                    time.sleep(0.2)
            except requests.ConnectionError:  # the run ended between two requests
                break
        assert proc.wait(timeout=120) == 0, out.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    assert len(db.entries("train")) + len(db.entries("val")) == answered == 9
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["timesteps"] >= 500 and summary["waits_for_labels"] >= 1
    assert to_go[0] == 9 and min(to_go) == 0 and to_go == sorted(to_go, reverse=True)
