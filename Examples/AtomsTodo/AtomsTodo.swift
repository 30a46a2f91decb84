// A todo list on atoms: the list is a loop (a spin atom); the filter is a
// state atom; the filtered list, the statistics and the status line are
// derived atoms, recomputed only when what they watch changes. Run it with
// `swift run spindle-atoms-todo` and type commands (`help` lists them), or
// pipe them in:
//
//   printf 'add milk\nadd eggs\ndone 1\nfilter active\nlist\n' | swift run spindle-atoms-todo
//
//   Todos.swift   the atoms
//   this file     the command line: it keeps the status line in use and
//                 prints it after each command that changed it

import Spindle
import SpindleAtoms

@main
struct AtomsTodo {
    static func main() async throws {
        let store = AtomStore()
        // Watching the status line keeps it, and everything it is derived
        // from (the list's loop included), in use. It is recomputed only
        // when the counts or the filter change, not on every list change.
        let summary = try store.watch(SummaryAtom()) { _ in }
        var printed = summary.initialValue!
        print("  ▸ \(printed)")
        // The list's revisions, to wait until each command is applied.
        let revisions = try store.values(of: TodosAtom().select(\.revision))
        var applied = revisions.makeAsyncIterator()
        var revision = await applied.next() ?? 0

        while let line = readLine() {
            let words = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard let command = words.first else { continue }
            let argument = words.count > 1 ? words[1] : ""
            var event: TodoEvent?
            switch command {
            case "add" where !argument.isEmpty: event = .add(argument)
            case "done", "undo": event = Int(argument).map { .toggle(index: $0 - 1) }
            case "remove": event = Int(argument).map { .remove(index: $0 - 1) }
            case "clear": event = .clearDone
            case "filter":
                if let filter = Filter(rawValue: argument) {
                    try store.set(filter, for: FilterAtom())
                } else {
                    print("filters: \(Filter.allCases.map(\.rawValue).joined(separator: ", "))")
                }
            case "list":
                for item in try store.read(FilteredTodosAtom()) {
                    print("\(item.index + 1). [\(item.todo.done ? "x" : " ")] \(item.todo.title)")
                }
            case "quit", "exit":
                summary.cancel()
                return
            default:
                print("commands: add TITLE, done N, undo N, remove N, clear, filter all|active|done, list, quit")
            }
            if let event {
                guard store.emit(event, to: TodosAtom()) == .accepted else { break }
                // Wait for the loop to reduce it: a positive signal, not a sleep.
                while let next = await applied.next() {
                    if next > revision {
                        revision = next
                        break
                    }
                }
            }
            let current = try store.read(SummaryAtom())
            if current != printed {
                printed = current
                print("  ▸ \(current)")
            }
        }
        summary.cancel()
    }
}
