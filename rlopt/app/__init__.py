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
- :mod:`rlopt.app.server`: :func:`~rlopt.app.server.create_app`, the application: what
  the pages share on ``app.state``, the route table behind the token gate;
- :mod:`rlopt.app.security`: the token gate, the CSRF field, the upload limit, and
  ``posted_to``, which checks a form before its handler reads it;
- :mod:`rlopt.app.forms`: the assess and map forms: their defaults, read from the
  commands they run, and their fields checked as those commands check them before a
  run is queued (a refused form is drawn again as given);
- :mod:`rlopt.app.routes`: one module-level endpoint per address, and the route table;
- :mod:`rlopt.app.views`: what the pages draw, as values for the templates (the pair,
  a run, a map's cells, the per-record table, the SVG geometry of the charts);
- :mod:`rlopt.app.live`: what a run's page shows while it runs: each family's panel
  (its time axis to now, a tag saying how it ended) and the step line's clocks;
- :mod:`rlopt.app.stream`: a run's server-sent events.
"""
