"""``rlopt serve``: the local web application (``pip install "rlopt[app]"``).

An officer loads two files, runs ``rlopt risk`` on them from a form and watches each
family's interval close. The application computes nothing itself: a run *is* the
``rlopt risk`` command it shows, run as a child process whose events, figures and report
the pages read back.

Modules, in the order a request flows through them:

- :mod:`rlopt.app.workspace`: the folder one server holds: loaded files and run folders,
  reached only by the identifiers it made;
- :mod:`rlopt.app.runs`: a run's options (:class:`~rlopt.app.runs.RunSpec`) as the
  command, its reproduce command and Python code, the queue of child processes, Stop as
  Ctrl-C, and what a run's folder says;
- :mod:`rlopt.app.prepare`: files made in the page and the privacy-models page, by the
  ``rlopt data``, ``rlopt mask`` and ``rlopt models`` commands;
- :mod:`rlopt.app.server`: the pages and the event stream, behind the token gate.
"""
