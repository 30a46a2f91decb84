import Foundation

/// `--chart PATH`: a hand-written SVG of events/s per scenario and engine —
/// one group of horizontal bars per scenario, one bar per engine (median),
/// a whisker from min to max, the figure and its ratio to baseline at the
/// end. The x axis is logarithmic (the scenarios span four decades), with a
/// labelled grid line per decade.
enum SVGChart {
    private static let width = 980.0
    private static let labelWidth = 170.0
    private static let plotLeft = 180.0
    private static let plotRight = width - 150.0
    private static let plotTop = 122.0
    private static let barHeight = 15.0
    private static let barGap = 3.0
    private static let groupGap = 14.0
    private static let font = "font-family=\"Helvetica, Arial, sans-serif\""

    static func color(for engine: String) -> String {
        switch engine {
        case Engine.lockfree.rawValue: "#3b6fb6"
        case Engine.bounded.rawValue: "#4f9a4a"
        case Engine.baseline.rawValue: "#9a9a9a"
        default: "#c06030"
        }
    }

    static func render(_ results: [ResultRow], context: RunContext) -> String {
        var scenarios: [String] = []
        for row in results where !scenarios.contains(row.scenario) { scenarios.append(row.scenario) }
        var engines: [String] = []
        for row in results where !engines.contains(row.engine) { engines.append(row.engine) }

        let values = results.flatMap { [$0.eventsPerSecond.min, $0.eventsPerSecond.max] }.filter { $0 > 0 }
        let ticks = tickValues(covering: values.min() ?? 1, values.max() ?? 10)
        let low = ticks[0]
        let high = ticks[ticks.count - 1]
        func x(_ value: Double) -> Double {
            let clamped = min(max(value, low), high)
            return plotLeft + (log10(clamped) - log10(low)) / (log10(high) - log10(low)) * (plotRight - plotLeft)
        }

        let groupHeight = Double(engines.count) * barHeight + Double(max(engines.count - 1, 0)) * barGap
        let plotBottom = plotTop + Double(scenarios.count) * (groupHeight + groupGap)
        let height = plotBottom + 56
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" \(font)>
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="20" y="30" font-size="18" font-weight="bold">\(escape("Spindle: events per second, per scenario and engine"))</text>
            <text x="20" y="50" font-size="12" fill="#444">\(escape("\(context.dateText) · \(context.machine)"))</text>
            <text x="20" y="67" font-size="12" fill="#444" font-family="Menlo, Consolas, monospace">\(escape(context.command))</text>
            <text x="20" y="84" font-size="12" fill="#444">\(escape("Bar: median of \(context.repetitions) repetitions; whisker: min – max; label: median (× baseline). Logarithmic scale."))</text>

            """

        // Legend.
        var legendX = plotLeft
        for engine in engines {
            svg += "<rect x=\"\(f(legendX))\" y=\"94\" width=\"12\" height=\"12\" fill=\"\(color(for: engine))\"/>"
            svg += "<text x=\"\(f(legendX + 17))\" y=\"104.5\" font-size=\"12\">\(escape(engine))</text>\n"
            legendX += 30 + Double(engine.count) * 7.5
        }

        // Group shading, decade grid and labels.
        for (index, scenario) in scenarios.enumerated() {
            let top = plotTop + Double(index) * (groupHeight + groupGap)
            if index % 2 == 0 {
                svg += "<rect x=\"10\" y=\"\(f(top - groupGap / 2))\" width=\"\(f(width - 20))\" height=\"\(f(groupHeight + groupGap))\" fill=\"#f4f6f8\"/>\n"
            }
            svg += "<text x=\"\(f(labelWidth))\" y=\"\(f(top + groupHeight / 2 + 4.5))\" font-size=\"13\" text-anchor=\"end\">\(escape(scenario))</text>\n"
        }
        for tick in ticks {
            let gx = x(tick)
            let major = isPowerOfTen(tick)
            svg += "<line x1=\"\(f(gx))\" y1=\"\(f(plotTop - 8))\" x2=\"\(f(gx))\" y2=\"\(f(plotBottom))\" stroke=\"\(major ? "#b8b8b8" : "#e2e2e2")\" stroke-width=\"1\"/>\n"
            svg += "<text x=\"\(f(gx))\" y=\"\(f(plotBottom + 16))\" font-size=\"\(major ? 12 : 10)\" fill=\"\(major ? "#222" : "#888")\" text-anchor=\"middle\">\(escape(Format.axisRate(tick)))</text>\n"
        }
        svg += "<text x=\"\(f((plotLeft + plotRight) / 2))\" y=\"\(f(plotBottom + 38))\" font-size=\"12\" text-anchor=\"middle\">events per second (log scale)</text>\n"

        // Bars, whiskers, labels.
        for (groupIndex, scenario) in scenarios.enumerated() {
            let top = plotTop + Double(groupIndex) * (groupHeight + groupGap)
            for (engineIndex, engine) in engines.enumerated() {
                guard let row = results.first(where: { $0.scenario == scenario && $0.engine == engine }) else { continue }
                let y = top + Double(engineIndex) * (barHeight + barGap)
                let mid = y + barHeight / 2
                let rate = row.eventsPerSecond
                svg += "<rect x=\"\(f(plotLeft))\" y=\"\(f(y))\" width=\"\(f(max(x(rate.median) - plotLeft, 1)))\" height=\"\(f(barHeight))\" fill=\"\(color(for: engine))\"><title>\(escape("\(scenario) · \(engine): \(Format.rate(rate.median)) (\(Format.rate(rate.min)) – \(Format.rate(rate.max)))"))</title></rect>\n"
                svg += "<path d=\"M\(f(x(rate.min))) \(f(mid))H\(f(x(rate.max)))M\(f(x(rate.min))) \(f(mid - 4))V\(f(mid + 4))M\(f(x(rate.max))) \(f(mid - 4))V\(f(mid + 4))\" stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\"/>\n"
                var label = Format.rate(rate.median)
                if engine != Engine.baseline.rawValue, let ratio = row.ratioToBaseline { label += " (\(Format.ratio(ratio)))" }
                svg += "<text x=\"\(f(max(x(rate.median), x(rate.max)) + 6))\" y=\"\(f(mid + 4))\" font-size=\"11\">\(escape(label))</text>\n"
            }
        }
        svg += "</svg>\n"
        return svg
    }

    /// The 1-2-5 steps from the largest one at or below `low` to the
    /// smallest one at or above `high`: the axis range and its grid lines.
    private static func tickValues(covering low: Double, _ high: Double) -> [Double] {
        var candidates: [Double] = []
        var decade = pow(10, floor(log10(low)))
        while true {
            candidates += [decade, decade * 2, decade * 5]
            if decade * 5 >= high {
                candidates.append(decade * 10)
                break
            }
            decade *= 10
        }
        let first = candidates.lastIndex { $0 <= low * 1.0001 } ?? 0
        let last = max(candidates.firstIndex { $0 >= high * 0.9999 } ?? candidates.count - 1, first + 1)
        return Array(candidates[first...last])
    }

    private static func isPowerOfTen(_ value: Double) -> Bool {
        let exponent = log10(value)
        return abs(exponent - exponent.rounded()) < 1e-9
    }

    private static func f(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
