[
  inputs: [
    "{mix,.formatter}.exs",
    "mix/**/*.exs",
    "{config,lib,test}/**/*.{ex,exs}",
    "{examples,bench}/*.exs"
  ]
]
