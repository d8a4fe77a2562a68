import Foundation

/// Turns frames into bytes and back (JSON), for transports that carry bytes.
///
/// Thread-safety: stateless; call from any thread.
public enum FrameCodec {
    /// The bytes of `frame`.
    public static func encode(_ frame: Frame) throws -> Data {
        try JSONEncoder().encode(frame)
    }

    /// The frame in `bytes`.
    /// - Throws: ``ClusterError/serialization(_:)`` when the bytes are not a frame.
    public static func decode(_ bytes: Data) throws -> Frame {
        do {
            return try JSONDecoder().decode(Frame.self, from: bytes)
        } catch {
            throw ClusterError.serialization("frame: \(error)")
        }
    }
}
