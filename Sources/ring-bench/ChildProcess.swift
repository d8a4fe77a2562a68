import Foundation

/// Runs a program and collects its stdout. Reads the pipe with read(2), retrying on
/// EINTR: Foundation's readDataToEndOfFile traps when a signal (SIGCHLD from an earlier
/// child, say) interrupts it.
enum ChildProcess {
    /// The program's stdout and exit status, or nil when it cannot start.
    static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil,
                    quietStderr: Bool = false) -> (output: Data, status: Int32)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        if quietStderr { process.standardError = FileHandle.nullDevice }
        guard (try? process.run()) != nil else { return nil }
        let fd = pipe.fileHandleForReading.fileDescriptor
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { output.append(contentsOf: buffer[0..<n]); continue }
            if n < 0, errno == EINTR { continue }
            break
        }
        process.waitUntilExit()
        return (output, process.terminationStatus)
    }
}
