"""A function handed to an outside call that calls it gets what that call hands it.

``pool.submit(work, job)`` runs ``work(job)``, ``map(each, jobs)`` runs ``each`` on the
elements of ``jobs``, ``sorted(jobs, key=rank)`` and ``jobs.sort(key=rank)`` run ``rank`` on
them, ``fut.add_done_callback(when_done)`` runs ``when_done(fut)``: the parameters of ``work``, ``each`` and ``rank``, which nothing else types, are
what the call hands (:mod:`indexgen.analyze.appliers`), so the calls on them are listed.
A ``submit`` of the tree's own is its code, not such a call: what it does with the function
is read from it.  Every expected edge is read off the source by hand.
"""

from __future__ import annotations

from ig_helpers import callees_by_mark

FILES = {
    "pkg/__init__.py": "",
    "pkg/jobs.py": '''
        from concurrent.futures import ThreadPoolExecutor


        class Job:
            def run(self):
                return 1


        class Other:
            def run(self):
                return 2


        def work(job):
            return job.run()  # WORK


        def each(job):
            return job.run()  # EACH


        def rank(job):
            return job.run()  # RANK


        def own(job):
            return job.run()  # OWN


        class Queue:
            def submit(self, fn, item):
                other = Other()
                return fn(other)


        def later(job):
            return job.run()  # OWN_SUBMIT


        class Future:
            def result(self):
                return 3


        def when_done(fut):
            return fut.result()  # DONE


        def make_future():
            return Future()


        def start(queue: Queue):
            jobs = [Job(), Job()]
            job = Job()
            with ThreadPoolExecutor() as pool:
                pool.submit(work, job)
            list(map(each, jobs))
            sorted(jobs, key=rank)
            jobs.sort(key=own)
            queue.submit(later, job)
            fut = make_future()
            fut.add_done_callback(when_done)
    ''',
}


def test_what_an_outside_call_hands_the_function_it_calls():
    found = callees_by_mark(FILES, "pkg/jobs.py")
    assert found["WORK"] == {"Job.run"}, found
    assert found["EACH"] == {"Job.run"}, found
    assert found["RANK"] == {"Job.run"}, found
    assert found["OWN"] == {"Job.run"}, found
    assert found["DONE"] == {"Future.result"}, found
    # the tree's own Queue.submit calls fn with an Other, not with the job handed (what
    # its call fn(other) hands is one step further than the flows follow: nothing)
    assert "Job.run" not in found["OWN_SUBMIT"], found


PACKED = {
    "pkg/__init__.py": "",
    "pkg/procs.py": '''
        import threading
        import multiprocessing as mp

        import torch.multiprocessing as tmp


        class Job:
            def run(self):
                return 1


        class Log:
            def write(self):
                return 2


        def loop(job, log=None):
            job.run()  # THREAD
            return log.write()  # THREAD_KW


        def each_rank(rank, job):
            return job.run()  # SPAWN


        class Worker:
            def _serve(self, job, log):
                job.run()  # PROCESS_0
                return log.write()  # PROCESS_1

            def start(self, job: Job, log: Log):
                threading.Thread(target=loop, args=(job,), kwargs={"log": log}).start()
                mp.Process(target=self._serve, args=[job, log]).start()
                tmp.spawn(each_rank, args=(job,), nprocs=2)
    ''',
}


def test_a_thread_or_process_hands_its_target_the_args_and_kwargs_written_there():
    # Thread(target=f, args=(a,), kwargs={"k": b}) runs f(a, k=b); spawn(fn, args=(a,))
    # runs fn(rank, a): the items of the literal tuple and dict are the target's arguments
    found = callees_by_mark(PACKED, "pkg/procs.py")
    assert found["THREAD"] == {"Job.run"}, found
    assert found["THREAD_KW"] == {"Log.write"}, found
    assert found["PROCESS_0"] == {"Job.run"}, found
    assert found["PROCESS_1"] == {"Log.write"}, found
    assert found["SPAWN"] == {"Job.run"}, found
