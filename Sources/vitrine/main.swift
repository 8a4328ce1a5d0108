import VitrineCLI

VitrineCommand.exit(with: VitrineCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
