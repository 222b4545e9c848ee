import MediaHost
import MediaKit
