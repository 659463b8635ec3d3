"""``tureen STORE`` on a terminal: a shell that takes the inspector's
commands on one open store, with line editing and a history kept in
``~/.tureen_history``."""

from __future__ import annotations

import argparse
import cmd
import os
import shlex
import sys
from typing import Any, Callable, List, Optional

from .store import Store

__all__ = ["shell", "Runner"]

#: Runs one parsed command on the open store; returns its exit status.
Runner = Callable[[argparse.Namespace, Store], int]

HISTORY = "~/.tureen_history"


def _commands(p: argparse.ArgumentParser) -> "dict[str, argparse.ArgumentParser]":
    for action in p._actions:  # argparse offers no public way to its subcommands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class _Shell(cmd.Cmd):
    prompt = "tureen> "

    def __init__(self, store: Store, args: argparse.Namespace, p: argparse.ArgumentParser, run: Runner) -> None:
        super().__init__()
        self.store = store
        self.run = run
        self.parser = p
        self.commands = _commands(p)
        # What was given before the store on the command line holds for
        # every command typed here.
        self.carried: List[str] = [args.store] + (["--read-only"] if args.read_only else [])
        if args.format:
            self.carried += ["--format", args.format]
        self.intro = "%s: type help for the commands, exit or Ctrl-D to leave" % args.store

    def emptyline(self) -> bool:
        return False  # cmd's default runs the last command again

    def default(self, line: str) -> None:
        try:
            words = shlex.split(line)
        except ValueError as e:
            sys.stderr.write("tureen: %s\n" % e)
            return
        if words[0] not in self.commands:
            sys.stderr.write("tureen: no command %r (help lists them)\n" % words[0])
            return
        try:
            args = self.parser.parse_args(self.carried + words)
        except SystemExit:  # argparse said why; the shell goes on
            return
        try:
            self.run(args, self.store)
        except KeyboardInterrupt:
            sys.stderr.write("\ninterrupted\n")
        sys.stdout.flush()

    def do_help(self, arg: str) -> bool:
        """help [COMMAND]: the commands, or one command's arguments."""
        if arg in self.commands:
            self.commands[arg].print_help()
            return False
        width = max(len(n) for n in self.commands)
        for name, sub in self.commands.items():
            sys.stdout.write("  %-*s  %s\n" % (width, name, _summary(self.parser, name)))
        sys.stdout.write("  %-*s  %s\n" % (width, "exit", "leave (or Ctrl-D)"))
        return False

    def do_exit(self, arg: str) -> bool:
        return True

    do_quit = do_exit

    def do_EOF(self, arg: str) -> bool:
        sys.stdout.write("\n")
        return True

    def completenames(self, text: str, *ignored: Any) -> List[str]:
        return [n for n in list(self.commands) + ["help", "exit"] if n.startswith(text)]


def _summary(p: argparse.ArgumentParser, name: str) -> str:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


def _history() -> Optional[Any]:
    """readline with the history file read, or None where Python has no
    readline (the shell then reads plain lines)."""
    try:
        import readline
    except ImportError:
        return None
    try:
        readline.read_history_file(os.path.expanduser(HISTORY))
    except OSError:
        pass  # none yet
    readline.set_history_length(1000)
    return readline


def shell(store: Store, args: argparse.Namespace, p: argparse.ArgumentParser, run: Runner) -> int:
    """Runs the shell until exit or Ctrl-D; Ctrl-C abandons the line typed
    (or stops the command running) and the shell goes on."""
    readline = _history()
    sh = _Shell(store, args, p, run)
    try:
        while True:
            try:
                sh.cmdloop()
                return 0
            except KeyboardInterrupt:
                sys.stdout.write("^C\n")
                sh.intro = ""
    finally:
        if readline is not None:
            try:
                readline.write_history_file(os.path.expanduser(HISTORY))
            except OSError as e:
                sys.stderr.write("tureen: history %s: %s\n" % (HISTORY, e.strerror))
