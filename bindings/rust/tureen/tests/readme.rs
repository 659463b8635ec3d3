//! The README's first program is the example `make test` runs, verbatim.

const README: &str = include_str!("../../README.md");
const EXAMPLE: &str = include_str!("../examples/first.rs");

#[test]
fn the_readmes_first_program_is_the_example() {
    let start = README.find("```rust\n").expect("a rust block in the README") + "```rust\n".len();
    let end = start + README[start..].find("\n```\n").expect("the block's end") + 1;
    assert_eq!(&README[start..end], EXAMPLE);
}
