# Sourced by the tests that run the README's examples as printed (tests/package/readme_examples_test.sh,
# tests/cli/readme_commands_test.sh): one way to find an example in README.md.

# readme_block FILE HEADING LANG [N]: the lines of the Nth (default first) ```LANG block under the
# line HEADING ("### From C"), up to the next heading of its level or above.
readme_block() {
  awk -v head="$2" -v open="\`\`\`$3" -v want="${4:-1}" '
    BEGIN { level = index(head, " ") - 1 }
    $0 == head { in_section = 1; next }
    in_section && !in_code && match($0, /^#+ /) && RLENGTH - 1 <= level { exit }
    in_section && !in_code && $0 == open { in_code = 1; ++n; next }
    in_code && $0 == "```" { in_code = 0; if (n == want) exit; next }
    in_code && n == want { print }' "$1"
}
