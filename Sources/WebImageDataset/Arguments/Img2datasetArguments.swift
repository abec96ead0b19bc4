import Foundation

/// img2dataset's command line (Python Fire: `--image_size=256`, `--resize_only_if_bigger True`,
/// lists as Python literals `'["noai","noindex"]'`) turned into `prefetch`'s, so that a job's
/// command runs with `webimage prefetch` in place of `img2dataset`. Its own option names become
/// ours; options that have no meaning here are dropped with a warning naming them; anything else
/// is left for the parser, which names what it does not know.
package enum Img2datasetArguments {
    /// img2dataset's names that are spelled differently here.
    package static let renamed: [String: String] = [
        "url_list": "--input", "output_folder": "--output", "thread_count": "-j", "number_sample_per_shard": "--shard-size",
    ]

    /// Its switches (Fire takes `--name`, `--name=True`, `--name True`, `--noname`).
    package static let switches: Set<String> = [
        "resize_only_if_bigger", "skip_reencode", "disable_all_reencoding", "extract_exif", "respect_robots_txt", "dedup",
        "keep_animation",
    ]

    /// Its options that have nothing to do here: with the reason given in the warning.
    package static let dropped: [String: String] = [
        "processes_count": "one process uses every core (-j sets the downloads at once)",
        "enable_wandb": "no Weights & Biases reporting", "wandb_project": "no Weights & Biases reporting",
        "distributor": "one process; --shard I/N spreads a list over machines",
        "subjob_size": "one process; --shard I/N spreads a list over machines",
        "oom_shard_count": "shard names have five digits", "incremental_mode": "a rerun always skips finished shards",
        "max_shard_retry": "a rerun redoes unfinished shards", "upscale_interpolation": "Lanczos-3 enlarges",
        "downscale_interpolation": "a widened bilinear filter shrinks",
        "ignore_ssl_certificate": "certificates are always verified (--cacert adds a CA)",
    ]

    /// The arguments after `prefetch`, translated, and a warning per dropped option.
    package static func translate(_ arguments: [String]) -> (arguments: [String], warnings: [String]) {
        var output: [String] = []
        var warnings: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.contains("_") || argument.contains("=") else {
                output.append(argument)
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            var value = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            guard name.contains("_") else {
                output.append(argument)
                continue
            }
            if let reason = dropped[name] {
                if value == nil, index < arguments.count, !arguments[index].hasPrefix("--") { index += 1 }
                warnings.append("--\(name) is img2dataset's and has no effect here: \(reason)")
                continue
            }
            let ours = renamed[name] ?? "--" + name.replacingOccurrences(of: "_", with: "-")
            if switches.contains(name) {
                if value == nil, index < arguments.count, boolean(arguments[index]) != nil {
                    value = arguments[index]
                    index += 1
                }
                let on = value.map { boolean($0) ?? true } ?? true
                if name == "extract_exif" {
                    output.append(on ? "--extract-exif" : "--no-extract-exif")
                } else if on {
                    output.append(ours)
                }
                continue
            }
            if value == nil, index < arguments.count {
                value = arguments[index]
                index += 1
            }
            // img2dataset's url_list may be a list of files: one --input each, read as one list.
            if name == "url_list", let value, isList(value) {
                output += items(value).flatMap { [ours, $0] }
                continue
            }
            output += [ours] + (value.map { [list($0)] } ?? [])
        }
        // img2dataset writes its files layout unless told otherwise.
        if arguments.contains(where: { $0.hasPrefix("--output_folder") }), !output.contains(where: { $0.hasPrefix("--output-format") }) {
            output += ["--output-format", "files"]
        }
        return (output, warnings)
    }

    /// Fire's booleans.
    package static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes": true
        case "false", "0", "no": false
        default: nil
        }
    }

    /// A Python list literal (`["a", 'b']`, what img2dataset's list options take) as `a,b`; any
    /// other value as it is.
    package static func list(_ text: String) -> String {
        isList(text) ? items(text).joined(separator: ",") : text
    }

    /// Whether a value is a Python list literal.
    package static func isList(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("[") && trimmed.hasSuffix("]")
    }

    /// A Python list literal's items, unquoted.
    package static func items(_ text: String) -> [String] {
        text.trimmingCharacters(in: .whitespaces).dropFirst().dropLast().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
        }
    }
}
