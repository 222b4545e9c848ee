import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Bluesky
