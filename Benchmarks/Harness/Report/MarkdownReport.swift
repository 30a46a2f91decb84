/// `--markdown PATH`: the results table (Benchmarks/Results/latest.md),
/// with the date, the command and the machine above it.
enum MarkdownReport {
    static func render(_ results: [ResultRow], context: RunContext) -> String {
        let table = ResultTable(results)
        func line(_ cells: [String]) -> String {
            "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
        }
        let alignment = ResultTable.header.indices.map { ResultTable.numeric.contains($0) ? "---:" : "---" }
        var text = "Measured \(context.dateText) with `\(context.command)` on \(context.machine); \(context.ceilings); median of \(context.repetitions) repetition\(context.repetitions == 1 ? "" : "s")"
        text += context.quick ? " at --quick sizes (a smoke run, not for comparison).\n\n" : ".\n\n"
        text += line(ResultTable.header) + "\n" + line(alignment) + "\n"
        for cells in table.rows {
            text += line(cells) + "\n"
        }
        if !table.notes.isEmpty {
            text += "\n" + table.notes.map { "- \($0)" }.joined(separator: "\n") + "\n"
        }
        text += "\n" + context.methodNote + "\n"
        return text
    }
}
