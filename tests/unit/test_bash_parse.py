"""The shell parser: read-only classification both ways, and the decomposition it rests on."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeloop.shell import command_effects
from codeloop.shell.argv_checks import CHECKS
from codeloop.shell.bash_parse import Assignment, Redirect, SimpleCommand, parse_command
from codeloop.shell.readonly import (
    READ_ONLY_COMMANDS,
    argv_problem,
    is_read_only_command,
    is_read_only_simple_command,
)

READ_ONLY = [
    "ls",
    "ls -la | grep foo | wc -l",
    "git log --oneline -5",
    "git --no-pager diff HEAD~1 -- src/",
    "git -C sub status --porcelain",
    "git show HEAD:README.md",
    "git branch",
    "git branch -a --merged main",
    "git branch -l 'feat*'",
    "git rev-parse --show-toplevel",
    "git ls-files | head",
    "git blame -L 1,5 f.py",
    "git remote -v",
    "cat a 2>/dev/null",
    "cat a 1>&2 2>/dev/null; cat <&3",
    "ls &> /dev/null",
    "ls 2>&-",
    "grep x < in.txt",
    'grep x <<< "$y"',
    "cat <<'EOF'\n$(rm x)\nEOF",
    "cat <<EOF | grep a\nhello $HOME\nEOF",
    "find . -name '*.py'",
    "find . -type f -newer x -print0",
    "echo $(pwd)",
    "echo `date`",
    'echo "$(git rev-parse HEAD)"',
    "cat $(ls *.txt)",
    "diff <(sort a) <(sort b)",
    "grep -r x . && echo done",
    "grep -q x f || echo missing",
    "(ls; pwd) | wc -l",
    "{ ls; pwd; } >&2",
    "if [ -f x ]; then cat x; else echo none; fi",
    "[[ -f a && -d b ]] && echo yes",
    'for f in *.py; do wc -l "$f"; done',
    "case x in a) ls;; *) pwd;; esac",
    "! grep -q x f",
    "echo $((1 + 2))",
    "echo ${HOME:-/tmp} ${#PATH} ${f%.py}",
    "LC_ALL=C sort f",
    "GIT_PAGER=cat git log -3",
    "sort -k2 -n f | uniq -c",
    "uniq f",
    "tree -L 2",
    "rg -n 'TODO' src",
    "jq '.name' package.json",
    "head -c 100 f | od -c",
    "sha256sum a b",
    "stat -c %s f",
    "du -sh . ; df -h",
    "which python3 && type ls",
    "date +%s",
    "date -d yesterday +%F",
    "printenv HOME",
    "printf '%s\\n' a b",
    "basename /a/b.c .c; dirname /a/b; realpath .; readlink -f x",
    "cut -d: -f1 /etc/passwd | tr a-z A-Z | nl",
    "true; false; :",
    "test -n x",
    "sleep 1",
    "command -v git",
    "time ls",
    "timeout 10 git status",
    "nice -n 5 cat f",
    "find . -name '*.py' | xargs grep -l foo",
    "xargs -I{} cat {}",
    "xargs -0 -n1 wc -l",
    "bash -c 'ls; cat x | wc'",
    "sh -c 'git status'",
    "bash -c \"bash -c 'pwd'\"",
    "l\\s -la",
    '"l"s',
    "ls \\\n  -la",
    "ls &",
    "ls # a comment",
    "echo $'a\\tb'",
    "timeout 5 bash -c 'ls'",
    "sed -n p f",
    "awk '{print}' f",
    "/bin/ls",
    "FOO=1",
    "FOO=1 BAR=2",
]

NOT_READ_ONLY = [
    "rm x",
    "ls; rm x",
    "ls && rm -rf /",
    "ls || rm x",
    "ls | rm x",
    "ls\nrm x",
    "echo hi > f",
    "cat a >> b",
    "ls &>out",
    "ls >| f",
    "echo hi >&file",
    "cat a > $OUT",
    "cat < /dev/tcp/example.com/80",
    "cat <<EOF > f\nhi\nEOF",
    "cat <<EOF\n$(rm x)\nEOF",
    "> f",
    "find . -delete",
    "find . -exec rm {} \\;",
    "find . -execdir cat {} +",
    "find . -fprint out",
    "find $DIR -name x",
    "echo $(rm x)",
    "echo `touch f`",
    'echo "`touch f`"',
    "cat <(rm x)",
    "cat a | tee >(rm x)",
    "echo ${x:-$(rm y)}",
    "bash -c 'rm x'",
    'sh -c "ls; rm x"',
    'bash -c "$CMD"',
    "bash --rcfile evil -c ls",
    "bash",
    "echo ls | sh",
    "bash script.sh",
    "eval ls",
    "\\eval ls",
    "e'v'al ls",
    "builtin eval ls",
    "command eval ls",
    "source ./x",
    ". ./x",
    "exec ls",
    "trap 'rm x' EXIT; ls",
    "hash -p /bin/rm ls; ls",
    "let x=1",
    "FOO=bar; rm x",
    "FOO=1; echo $FOO",
    "HOME=/tmp FOO=1",
    "PWD=/ FOO=1",
    "PATH=/tmp ls",
    "PATH=/tmp/evil; ls",
    "LD_PRELOAD=/tmp/x.so ls",
    "GIT_EXTERNAL_DIFF=x git diff",
    "PAGER=less git log",
    "X=$(rm y) ls",
    "export A=1",
    "declare -i x",
    "git branch -D main",
    "git branch -m a b",
    "git branch newbranch",
    "git checkout x",
    "git commit -m x",
    "git -c core.pager=evil log",
    "git diff --output=f",
    "git log --out=f",
    "env",
    "env FOO=1",
    "git grep -O vim x",
    "git",
    "sort -o out in",
    "sort --output=out in",
    "sort --compress-program=sh f",
    "uniq a b",
    "tree -o f",
    "rg --pre cat x",
    "file -C -m magic",
    "date -s now",
    "date 010100002024",
    "printf -v x %s y",
    "env rm x",
    "env -S 'rm x'",
    "xargs rm",
    "xargs rg x",
    "xargs find",
    "xargs -p cat",
    "f() { rm x; }; f",
    "function f { ls; }",
    "alias ls=rm; ls",
    "tee f",
    "sed -i s/a/b/ f",
    "npm test",
    "cd src && ls",
    "ｒｍ x",
    "/bin/rm x",
    "./ls",
    "command rm x",
    "nice rm x",
    "timeout 5 rm x",
    "time rm x",
    "sudo ls",
    "nohup ls",
    "less f",
    "vim f",
    "$CMD x",
    "l$X -la",
    "l* -la",
    "echo $((x))",
    "echo $(( $x + 1 ))",
    "x='a[$(rm f)]'; echo $((x))",
    "for x in 'a[$(rm f)]'; do echo $((x)); done",
    "for ((i=0; i<3; i++)); do ls; done",
    "((i++))",
    "echo ${s:x} ",
    "echo ${a[i]}",
    "echo ${!x}",
    "echo ${x:=y}",
    "echo ${x@P}",
    "[[ $x -eq 1 ]]",
    "test -v 'a[$(rm f)]'",
    '[ -v "a[\\$(rm f)]" ]',
    "unset 'a[$(rm f)]'",
    "ls;;",
    "ls )",
    "if true; then ls",
    "echo 'unterminated",
    "cat <> f",
    ")(&&|| ;;",
    "",
    "# just a comment",
    "r\\\nm x",
    "x=\\\n rm y",
    "ls\\\n#; rm x",
    "ls\n\\rm x",
    "\\ rm x",
    "*x=1",
    "!ls",
    "cat <<-EOF\n\t$(rm x)\n\tEOF",
    "cat <<EOF\n`rm x`\nEOF",
    "echo ${x:-`rm y`}",
    "echo `echo \\$(rm x)`",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only(command: str) -> None:
    parsed = parse_command(command)
    assert parsed.ok, parsed.unparsed_reasons
    assert is_read_only_command(command)


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_not_read_only(command: str) -> None:
    assert not is_read_only_command(command)


def test_the_table_is_big_enough() -> None:
    assert len(READ_ONLY) + len(NOT_READ_ONLY) >= 80


# --- decomposition ------------------------------------------------------------------------


def argvs(command: str) -> list[list[str]]:
    return [c.argv for c in parse_command(command).commands]


def only(command: str) -> SimpleCommand:
    parsed = parse_command(command)
    assert parsed.ok, parsed.unparsed_reasons
    assert len(parsed.commands) == 1
    return parsed.commands[0]


def test_quotes_and_escapes_are_resolved() -> None:
    cmd = only('grep -e \'a b\' "x" e\\ f "q\\"u\\$o" $\'t\\x41\\n\' l\'o\'"n"g')
    assert cmd.argv == ["grep", "-e", "a b", "x", "e f", 'q"u$o', "tA\n", "long"]
    assert not any(cmd.argv_dynamic)


def test_dynamic_words_are_marked_and_keep_their_text() -> None:
    cmd = only("ls \"$HOME/x\" *.py '*.py' {a,b} ~/d HEAD~1 x{} a=~")
    assert cmd.argv == ["ls", "$HOME/x", "*.py", "*.py", "{a,b}", "~/d", "HEAD~1", "x{}", "a=~"]
    assert cmd.argv_dynamic == [False, True, True, False, True, True, False, False, True]


def test_line_continuation_joins_a_split_word() -> None:
    assert argvs("gi\\\nt sta\\\ntus") == [["git", "status"]]
    assert argvs("ls \\\n -la") == [["ls", "-la"]]


def test_continuations_are_removed_before_parsing_like_bash_does() -> None:
    # The grammar alone reads `x=\\<nl> rm y` as `x=rm y`; bash runs `rm y`.
    parsed = parse_command("x=\\\n rm y")
    assert parsed.ok
    assert parsed.commands[0].argv == ["rm", "y"]
    assert parsed.commands[0].assignments == [Assignment("x", "", False)]
    # Spans still point into the text as given, and literal text keeps its backslash-newline.
    command = "echo 'a\\\nb' \\\n && rm x"
    parsed = parse_command(command)
    assert parsed.commands[0].argv == ["echo", "a\\\nb"]
    assert [command[a:b] for a, b in (c.span for c in parsed.commands)][1] == "rm x"


def test_assignments_and_redirects() -> None:
    cmd = only("LC_ALL=C X=$Y sort f 2>/dev/null >>out <in 1>&- &>all 3>&1")
    assert cmd.argv == ["sort", "f"]
    assert cmd.assignments == [Assignment("LC_ALL", "C", False), Assignment("X", "$Y", True)]
    assert cmd.redirects == [
        Redirect(">", "/dev/null", 2),
        Redirect(">>", "out", None),
        Redirect("<", "in", None),
        Redirect(">&-", None, 1),
        Redirect("&>", "all", None),
        Redirect(">&", "1", 3),
    ]


def test_bare_assignment_is_a_command_without_argv() -> None:
    parsed = parse_command("A=1 B=x; ls")
    assert parsed.ok
    assert parsed.commands[0].argv == []
    assert [a.name for a in parsed.commands[0].assignments] == ["A", "B"]
    assert is_read_only_simple_command(parsed.commands[0])  # sets shell variables, no more
    assert is_read_only_simple_command(parsed.commands[1])
    home = parse_command("HOME=/tmp")  # where `cd` and `~` go, and what git reads
    assert not is_read_only_simple_command(home.commands[0])


def test_group_redirects_reach_every_command_inside() -> None:
    parsed = parse_command("{ ls; pwd; } > f")
    assert [c.redirects for c in parsed.commands] == [[Redirect(">", "f", None)]] * 2


def test_words_the_grammar_hangs_on_a_redirect_go_back_to_argv() -> None:
    assert only("ls > out more").argv == ["ls", "more"]


def test_every_nesting_is_found_in_source_order() -> None:
    command = (
        "a && b || c; d | e\nf & (g; { h; }) && if i; then j; elif k; then l; else m; fi; "
        "for x in $(n); do o; done; while p; do q; done; case $(r) in s) t;; esac; "
        'u `v` <(w) >(x2) "$(y)"'
    )
    names = [argv[0] for argv in argvs(command)]
    assert names == [*"abcdefghijklmnopqrtuvw", "x2", "y"]
    parsed = parse_command(command)
    assert parsed.ok
    assert parsed.has_command_substitution and parsed.has_process_substitution


def test_nested_substitutions() -> None:
    parsed = parse_command('echo "$(cat $(ls | head -1))"')
    assert [c.argv for c in parsed.commands] == [
        ["echo", "$(cat $(ls | head -1))"],
        ["cat", "$(ls | head -1)"],
        ["ls"],
        ["head", "-1"],
    ]
    assert parsed.commands[0].argv_dynamic == [False, True]


def test_here_document_pieces() -> None:
    parsed = parse_command("cat <<EOF > out && rm x\n$(date)\nEOF")
    assert parsed.ok
    assert [c.argv for c in parsed.commands] == [["cat"], ["rm", "x"], ["date"]]
    assert parsed.commands[0].redirects == [Redirect("<<", "EOF", None), Redirect(">", "out", None)]


def test_spans_are_character_offsets() -> None:
    command = 'echo "héllo" && rm x'
    spans = [c.span for c in parse_command(command).commands]
    assert [command[a:b] for a, b in spans] == ['echo "héllo"', "rm x"]
    assert parse_command("cat a 2>/dev/null").commands[0].span == (0, 17)


def test_shell_c_script_is_parsed_recursively() -> None:
    parsed = parse_command("sudo -u bob bash -lc 'ls; rm -rf \"$D\"' && zsh -c \"sh -c 'pwd'\"")
    assert parsed.ok
    assert [c.argv for c in parsed.commands] == [
        ["sudo", "-u", "bob", "bash", "-lc", 'ls; rm -rf "$D"'],
        ["ls"],
        ["rm", "-rf", "$D"],
        ["zsh", "-c", "sh -c 'pwd'"],
        ["sh", "-c", "pwd"],
        ["pwd"],
    ]
    assert parsed.commands[0].script == 'ls; rm -rf "$D"'
    outer_span = parsed.commands[0].span
    assert parsed.commands[1].span == parsed.commands[2].span == outer_span


def test_shell_c_problems_are_reported_from_inside() -> None:
    parsed = parse_command("bash -c 'eval x'")
    assert not parsed.ok
    assert parsed.unparsed_reasons[0].startswith("in bash -c: eval runs code")


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo 'unterminated", "syntax error at line 1"),
        ("ls\nif true; then", "syntax error at line 2"),
        ("ls;;", "unexpected ';;'"),
        ("eval ls", "eval runs code the parser cannot see"),
        ("f() { ls; }", "defines a function"),
        ('bash -c "$X"', "bash -c script is not a literal"),
        ("cat x | sh", "sh reads its commands from stdin"),
        ("bash -s < x", "bash reads its commands from stdin"),
        ("PATH=. ls", "assigns PATH"),
        ("echo $((x))", "arithmetic on a non-literal"),
        ("echo ${!ref}", "expansion may assign or evaluate"),
        ("[[ $n -gt 2 ]]", "-gt evaluates its operands as arithmetic"),
        ("read 'a[$(id)]'", "read evaluates the subscript"),
        ("a[i]=1", "array subscript is evaluated as arithmetic"),
        ("echo \\ a", "text the grammar skipped"),
        ("ls\n\\rm x", "blank inside a word"),
        ("x=1; } }!", "blank inside a word"),
        ("*x=1", "not a valid assignment"),
        ("cat <<EOF\n`id`\nEOF", "here-document expansion the grammar did not parse"),
        ("echo ${x:-`id`}", "substitution the grammar did not parse"),
        ("echo `echo \\`id\\``", "backticks with escapes are parsed twice"),
    ],
)
def test_not_ok_says_why(command: str, reason: str) -> None:
    parsed = parse_command(command)
    assert not parsed.ok
    assert any(r.startswith(reason) for r in parsed.unparsed_reasons), parsed.unparsed_reasons


def test_things_that_look_odd_but_are_modeled() -> None:
    for command in ["echo '$(rm x)'", "grep -r 'eval' .", "echo a[1]", "[[ 2 -eq 2 ]]", ""]:
        assert parse_command(command).ok, command


def test_read_only_table_is_data_the_permission_layer_can_reuse() -> None:
    assert READ_ONLY_COMMANDS["ls"] is None
    assert argv_problem(["git", "branch", "--list"]) is None
    assert argv_problem(["git", "branch", "-D", "x"])
    assert argv_problem([])


def test_every_program_of_the_table_has_its_check_and_every_check_its_program() -> None:
    """The table names the programs; their checks are argv_checks.py's, loaded on first use."""
    checked = {name for name in READ_ONLY_COMMANDS if READ_ONLY_COMMANDS[name] is not None}
    assert checked == set(CHECKS)
    assert "echo" in READ_ONLY_COMMANDS and "rm" not in READ_ONLY_COMMANDS
    assert len(READ_ONLY_COMMANDS) == len(set(READ_ONLY_COMMANDS))
    with pytest.raises(KeyError):
        READ_ONLY_COMMANDS["rm"]


def test_every_wrapper_unwrap_takes_off_has_its_option_grammar() -> None:
    """The wrappers are named apart from their grammars, which load with the first one met."""
    assert set(command_effects._wrapper_specs()) == command_effects._WRAPPING
    assert set(command_effects._elevating_specs()) < command_effects._ELEVATING


def test_predicate_commands_reject_dynamic_arguments() -> None:
    # `find $X` could be `find -delete`; `ls $X` lists whatever it is.
    assert is_read_only_command("ls $X")
    assert not is_read_only_command("find . $X")
    assert not is_read_only_command("git log $RANGE")


# Tricky lines the grammar is known to get wrong, or nearly: bash itself says what runs.
AGAINST_BASH = [
    "aa; bb && cc || dd | ee |& ff",
    "(aa; { bb; }) & cc",
    'echo $(aa) `bb` "$(cc)" "`dd`" $(echo $(ee))',
    'echo ${x:-$(aa)} "${x/$(bb)/c}" ${#x}',
    "cat <(aa) >(bb) <<< $(cc)",
    "cat <<EOF\n$(aa) ${x:-$(bb)}\nEOF",
    "cat <<'EOF'\n$(aa)\nEOF",
    "if aa; then bb; elif cc; then dd; else ee; fi",
    "for x in $(aa); do bb; done; while false; do cc; done",
    "case $(aa) in *) bb;; esac",
    "x=$(aa) bb; y=`cc`; a=($(dd))",
    'export x=$(aa); [[ -n $(bb) ]]; test "$(cc)"',
    "a\\\na; b\\\n b; x=\\\n cc",
    "echo a#$(aa); echo b #$(bb)",
    "echo $(case x in x) aa;; esac)",
    "aa 2>&1 >/dev/null | bb > $(cc)",
    "echo '$(aa)' \"\\$(bb)\" $'$(dd)'; ee",
    "\\aa; 'b'b; c''c; d\"\"d",
    "echo $(\naa\nbb\n)",
]


@pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="needs bash")
@pytest.mark.parametrize("command", AGAINST_BASH)
def test_bash_runs_nothing_the_parse_missed(command: str, tmp_path: Path) -> None:
    parsed = parse_command(command)
    assert parsed.ok, parsed.unparsed_reasons
    log = tmp_path / "log"
    log.touch()
    # With no PATH, every external command lands in the handler, which logs its name.
    handler = 'command_not_found_handle() { printf "%s\\0" "$1" >> "$LOG"; }\n'
    subprocess.run(
        ["/bin/bash", "-c", handler + command],
        cwd=tmp_path,
        env={"PATH": "/nonexistent", "LOG": str(log), "HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
    )
    ran = [name for name in log.read_text().split("\0") if name]
    assert ran
    assert set(ran) <= {c.argv[0] for c in parsed.commands if c.argv}


def test_import_does_not_load_the_grammar() -> None:
    code = "import sys, codeloop.shell.bash_parse; print('tree_sitter' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_parsing_from_many_threads() -> None:
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(is_read_only_command, ["ls | wc -l", "rm x"] * 200))
    assert results == [True, False] * 200


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\|&;<>{}[]*=#!\n~-c"))))
def test_arbitrary_text_never_raises(command: str) -> None:
    parsed = parse_command(command)
    assert is_read_only_command(command) in (True, False)
    assert all(len(c.argv) == len(c.argv_dynamic) for c in parsed.commands)


def test_for_loops_record_the_words_their_variable_takes() -> None:
    parsed = parse_command('for f in ~/.ssh/* a"b"; do cat "$f"; done; for f in c; do :; done')
    assert parsed.loop_words == {"f": (("~/.ssh/*", True), ("ab", False), ("c", False))}
    assert parse_command("for f; do cat $f; done").loop_words == {"f": ()}  # "$@": unknown
    assert parse_command("case $x in a) ls;; esac").loop_words == {}


def test_pipes_record_which_simple_command_feeds_each_stage() -> None:
    parsed = parse_command("find . | xargs cat | head")
    find, xargs, head = parsed.commands
    assert parsed.fed_by == {xargs.span: find.span, head.span: xargs.span}
    compound = parse_command("{ echo .env; } | xargs cat")
    assert compound.fed_by == {compound.commands[1].span: None}
    both = parse_command("ls |& xargs cat")
    assert both.fed_by == {both.commands[1].span: None}  # stderr joins the names
